// LayerNormNode forward, backward and backward-over-backward (trainer/layernorm_node.h).
// Parameter-shaped op outputs go to scratch 2 and 3 and are then added into the
// gradient slots; row outputs are written into their slot directly when it is fresh.
#include "trainer/layernorm_node.h"

#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {

OpDesc LayerNormNode::Desc(Op op) const {
  OpDesc d;
  d.op = op;
  d.dtype = x_->value.dtype;
  d.layernorm.eps = eps_;
  return d;
}

absl::Status LayerNormNode::Forward(Workspace& ws, GraphParams& p) {
  return Recompute(ws, p, y_->value);
}

absl::Status LayerNormNode::Recompute(Workspace& ws, GraphParams& p, const TensorView& out) {
  const int64_t M = x_->value.dim(0);
  const DType pdt = ParamDType(x_->value.dtype);
  ASSIGN_OR_RETURN(TensorView mean, ws.Scratch(1, pdt, {M}));
  ASSIGN_OR_RETURN(TensorView rstd, ws.Scratch(2, pdt, {M}));
  return ws.Run(Desc(Op::kLayerNorm), {x_->value, p.value[g_], p.value[b_]}, {out, mean, rstd});
}

absl::Status LayerNormNode::Backward(Workspace& ws, GraphParams& p, Sweep s) {
  ASSIGN_OR_RETURN(TensorView dy, ws.Read(y_->Adj(s)));
  const int64_t C = x_->value.dim(1);
  const DType pdt = ParamDType(x_->value.dtype);
  ASSIGN_OR_RETURN(TensorView dg, ws.Scratch(2, pdt, {C}));
  ASSIGN_OR_RETURN(TensorView db, ws.Scratch(3, pdt, {C}));
  TensorView dx;
  Workspace::Dest dest;
  if (x_->needs_grad) {
    ASSIGN_OR_RETURN(dest, ws.Begin(x_->Adj(s), 1));
    dx = dest.view;
  } else {
    ASSIGN_OR_RETURN(dx, ws.Scratch(1, x_->value.dtype, {x_->value.dim(0), C}));
  }
  RETURN_IF_ERROR(ws.Run(Desc(Op::kLayerNormBwd), {x_->value, p.value[g_], dy}, {dx, dg, db}));
  if (x_->needs_grad) RETURN_IF_ERROR(ws.Finish(dest));
  RETURN_IF_ERROR(ws.AccumulateCopy(p.Adj(g_, s), dg));
  return ws.AccumulateCopy(p.Adj(b_, s), db);
}

absl::Status LayerNormNode::BackwardBackward(Workspace& ws, GraphParams& p) {
  ASSIGN_OR_RETURN(TensorView gx, ws.Read(x_->gcot));  // zero for a constant input
  const int64_t C = x_->value.dim(1);
  ASSIGN_OR_RETURN(TensorView dgamma, ws.Scratch(2, ParamDType(x_->value.dtype), {C}));
  ASSIGN_OR_RETURN(Workspace::Dest dx, ws.Begin(x_->acot, 1));
  ASSIGN_OR_RETURN(Workspace::Dest ddy, ws.Begin(y_->gcot, 3));
  RETURN_IF_ERROR(ws.Run(Desc(Op::kLayerNormBwdBwd),
                         {x_->value, p.value[g_], y_->cot.view, gx, p.probe[g_], p.probe[b_]},
                         {dx.view, dgamma, ddy.view}));
  RETURN_IF_ERROR(ws.Finish(dx));
  RETURN_IF_ERROR(ws.Finish(ddy));
  return ws.AccumulateCopy(p.hv[g_], dgamma);
}

}  // namespace flashtick
