// LinearNode forward, backward and backward-over-backward (trainer/linear_node.h).
#include "trainer/linear_node.h"

#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {

absl::Status LinearNode::Forward(Workspace& ws, GraphParams& p) {
  // y = x·Wᵀ + b as one matmul, the bias in its epilogue (kernels/ops/matmul.h); the
  // backward is unchanged (db is still kBiasGrad of dy).
  Slot y{y_->value, false};
  return ws.AccumulateMatmul(y, x_->value, p.value[w_], false, true, &p.value[b_]);
}

absl::StatusOr<TensorView> LinearNode::Input(Workspace& ws, GraphParams& p) const {
  if (x_source_ == nullptr) return x_->value;
  const TensorView& x = x_->value;
  ASSIGN_OR_RETURN(TensorView r, ws.Scratch(kRecomputeScratch, x.dtype, {x.dim(0), x.dim(1)}));
  RETURN_IF_ERROR(x_source_->Recompute(ws, p, r));
  return r;
}

absl::Status LinearNode::Backward(Workspace& ws, GraphParams& p, Sweep s) {
  ASSIGN_OR_RETURN(TensorView dy, ws.Read(y_->Adj(s)));
  ASSIGN_OR_RETURN(TensorView x, Input(ws, p));
  if (x_->needs_grad)
    RETURN_IF_ERROR(ws.AccumulateMatmul(x_->Adj(s), dy, p.value[w_], false, false));  // dy·W
  RETURN_IF_ERROR(ws.AccumulateMatmul(p.Adj(w_, s), dy, x, true, false));             // dyᵀ·x
  return ws.AccumulateAs(p.Adj(b_, s), ParamDType(dy.dtype), [&](const TensorView& db) {
    OpDesc d;
    d.op = Op::kBiasGrad;
    d.dtype = dy.dtype;
    return ws.Run(d, {dy}, {db});
  });
}

absl::Status LinearNode::BackwardBackward(Workspace& ws, GraphParams& p) {
  const TensorView dy = y_->cot.view;  // complete since the kGrad sweep
  // ĝy = ĝx·Wᵀ + x·vWᵀ + vb; this node produced y, so ĝy is written here first.
  if (x_->needs_grad) {
    ASSIGN_OR_RETURN(TensorView gx, ws.Read(x_->gcot));
    RETURN_IF_ERROR(ws.AccumulateMatmul(y_->gcot, gx, p.value[w_], false, true));
    RETURN_IF_ERROR(ws.AccumulateMatmul(x_->acot, dy, p.probe[w_], false, false));  // âx
    RETURN_IF_ERROR(ws.AccumulateMatmul(p.hv[w_], dy, gx, true, false));            // hvW
  }
  ASSIGN_OR_RETURN(TensorView x, Input(ws, p));
  return ws.AccumulateMatmul(y_->gcot, x, p.probe[w_], false, true, &p.probe[b_]);  // + vb
}

}  // namespace flashtick
