// LossNode forward, seed and backward-over-backward (trainer/loss_node.h).
#include "trainer/loss_node.h"

#include "common/status_macros.h"

namespace flashtick {

OpDesc LossNode::Desc(Op op) const {
  OpDesc d;
  d.op = op;
  d.dtype = logits_->value.dtype;
  d.cross_entropy.ignore_label = ignore_;
  return d;
}

absl::Status LossNode::Forward(Workspace& ws, GraphParams&) {
  return ws.Run(Desc(Op::kSoftmaxCrossEntropy), {logits_->value, labels_}, {rows_});
}

absl::Status LossNode::Backward(Workspace& ws, GraphParams&, Sweep s) {
  if (s == Sweep::kHvp) return absl::OkStatus();
  return ws.Accumulate(logits_->cot, [&](const TensorView& dlogits) {
    return ws.Run(Desc(Op::kSoftmaxCrossEntropyBwd), {logits_->value, labels_, weights_},
                  {dlogits});
  });
}

absl::Status LossNode::BackwardBackward(Workspace& ws, GraphParams&) {
  ASSIGN_OR_RETURN(TensorView g, ws.Read(logits_->gcot));
  ASSIGN_OR_RETURN(TensorView dw, ws.Scratch(2, weights_.dtype, {weights_.numel()}));
  return ws.Accumulate(logits_->acot, [&](const TensorView& dlogits) {
    return ws.Run(Desc(Op::kSoftmaxCrossEntropyBwdBwd), {logits_->value, labels_, weights_, g},
                  {dlogits, dw});
  });
}

}  // namespace flashtick
