// GeluNode forward, backward and backward-over-backward (trainer/gelu_node.h).
#include "trainer/gelu_node.h"

#include "common/status_macros.h"

namespace flashtick {

absl::Status GeluNode::Forward(Workspace& ws, GraphParams&) {
  return ws.Run(Desc(Op::kGelu), {u_->value}, {z_->value});
}

absl::Status GeluNode::Backward(Workspace& ws, GraphParams&, Sweep s) {
  ASSIGN_OR_RETURN(TensorView dz, ws.Read(z_->Adj(s)));
  return ws.Accumulate(u_->Adj(s), [&](const TensorView& du) {
    return ws.Run(Desc(Op::kGeluBwd), {u_->value, dz}, {du});
  });
}

absl::Status GeluNode::BackwardBackward(Workspace& ws, GraphParams&) {
  ASSIGN_OR_RETURN(TensorView gu, ws.Read(u_->gcot));
  ASSIGN_OR_RETURN(Workspace::Dest du, ws.Begin(u_->acot, 1));
  ASSIGN_OR_RETURN(Workspace::Dest ddz, ws.Begin(z_->gcot, 2));
  RETURN_IF_ERROR(
      ws.Run(Desc(Op::kGeluBwdBwd), {u_->value, z_->cot.view, gu}, {du.view, ddz.view}));
  RETURN_IF_ERROR(ws.Finish(du));
  return ws.Finish(ddz);
}

}  // namespace flashtick
