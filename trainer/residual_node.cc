// ResidualNode forward, backward and backward-over-backward (trainer/residual_node.h).
#include "trainer/residual_node.h"

#include "common/status_macros.h"

namespace flashtick {

absl::Status ResidualNode::Forward(Workspace& ws, GraphParams&) {
  OpDesc d;
  d.op = Op::kAdd;
  d.dtype = y_->value.dtype;
  return ws.Run(d, {x1_->value, x2_->value}, {y_->value});
}

absl::Status ResidualNode::Backward(Workspace& ws, GraphParams&, Sweep s) {
  ASSIGN_OR_RETURN(TensorView dy, ws.Read(y_->Adj(s)));
  if (x1_->needs_grad) RETURN_IF_ERROR(ws.AccumulateCopy(x1_->Adj(s), dy));
  if (x2_->needs_grad) RETURN_IF_ERROR(ws.AccumulateCopy(x2_->Adj(s), dy));
  return absl::OkStatus();
}

absl::Status ResidualNode::BackwardBackward(Workspace& ws, GraphParams&) {
  ASSIGN_OR_RETURN(TensorView g1, ws.Read(x1_->gcot));
  ASSIGN_OR_RETURN(TensorView g2, ws.Read(x2_->gcot));
  RETURN_IF_ERROR(ws.AccumulateCopy(y_->gcot, g1));
  return ws.AccumulateCopy(y_->gcot, g2);
}

}  // namespace flashtick
