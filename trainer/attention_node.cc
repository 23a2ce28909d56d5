// AttentionNode forward, backward and backward-over-backward (trainer/attention_node.h).
#include "trainer/attention_node.h"

#include "common/status_macros.h"
#include "kernels/ops/attention.h"

namespace flashtick {

TensorView AttentionNode::Heads(const TensorView& buf, int64_t col, int64_t heads) const {
  const int64_t width = buf.dim(1);
  TensorView v = buf;
  v.data = static_cast<char*>(buf.data) + col * static_cast<int64_t>(DTypeSize(buf.dtype));
  v.rank = 4;
  v.shape = {d_.B, d_.T, heads, d_.D, 0};
  v.strides = {d_.T * width, width, d_.D, 1, 0};
  return v;
}

absl::Status AttentionNode::RotateQK(Workspace& ws, const TensorView& src, const TensorView& dst,
                                     bool inverse) const {
  OpDesc d;
  d.op = Op::kRope;
  d.dtype = src.dtype;
  d.rope.theta = d_.rope_theta;
  d.rope.rotary_dims = d_.rotary_dims;
  d.rope.inverse = inverse;
  const int64_t kcol = d_.H * d_.D;
  RETURN_IF_ERROR(ws.Run(d, {Heads(src, 0, d_.H)}, {Heads(dst, 0, d_.H)}));
  return ws.Run(d, {Heads(src, kcol, d_.Hkv)}, {Heads(dst, kcol, d_.Hkv)});
}

OpDesc AttentionNode::AttnDesc(Op op) const {
  OpDesc d;
  d.op = op;
  d.dtype = qkv_->value.dtype;
  d.attention.causal = true;
  d.attention.scale = 0.0f;  // 1/√D
  return d;
}

absl::Status AttentionNode::Forward(Workspace& ws, GraphParams&) {
  const TensorView& qkv = qkv_->value;
  RETURN_IF_ERROR(RotateQK(ws, qkv, qkv, /*inverse=*/false));  // qkv = (Rq, Rk, v) from here
  const int64_t kcol = d_.H * d_.D, vcol = (d_.H + d_.Hkv) * d_.D;
  return ws.Run(AttnDesc(Op::kAttentionFwd),
                {Heads(qkv, 0, d_.H), Heads(qkv, kcol, d_.Hkv), Heads(qkv, vcol, d_.Hkv)},
                {Heads(o_->value, 0, d_.H), lse_});
}

absl::Status AttentionNode::Backward(Workspace& ws, GraphParams&, Sweep s) {
  ASSIGN_OR_RETURN(TensorView dout, ws.Read(o_->Adj(s)));
  ASSIGN_OR_RETURN(Workspace::Dest dqkv, ws.Begin(qkv_->Adj(s), 1));
  TensorView dvec = dvec_;  // kept for the backward-over-backward
  if (s == Sweep::kHvp) {
    ASSIGN_OR_RETURN(dvec, ws.Scratch(2, dvec_.dtype, {d_.B, d_.H, d_.T}));
  }
  const int64_t kcol = d_.H * d_.D, vcol = (d_.H + d_.Hkv) * d_.D;
  const TensorView& qkv = qkv_->value;
  RETURN_IF_ERROR(ws.Run(AttnDesc(Op::kAttentionBwd),
                         {Heads(qkv, 0, d_.H), Heads(qkv, kcol, d_.Hkv), Heads(qkv, vcol, d_.Hkv),
                          Heads(o_->value, 0, d_.H), Heads(dout, 0, d_.H), lse_},
                         {Heads(dqkv.view, 0, d_.H), Heads(dqkv.view, kcol, d_.Hkv),
                          Heads(dqkv.view, vcol, d_.Hkv), dvec}));
  RETURN_IF_ERROR(RotateQK(ws, dqkv.view, dqkv.view, /*inverse=*/true));  // dq = Rᵀ dQr
  return ws.Finish(dqkv);
}

absl::Status AttentionNode::BackwardBackward(Workspace& ws, GraphParams&) {
  ASSIGN_OR_RETURN(TensorView g, ws.Read(qkv_->gcot));
  ASSIGN_OR_RETURN(TensorView grot, ws.Scratch(1, g.dtype, {g.dim(0), (d_.H + d_.Hkv) * d_.D}));
  RETURN_IF_ERROR(RotateQK(ws, g, grot, /*inverse=*/false));  // gQr = R ĝq, gKr = R ĝk
  ASSIGN_OR_RETURN(Workspace::Dest aqkv, ws.Begin(qkv_->acot, 2));
  ASSIGN_OR_RETURN(Workspace::Dest gout, ws.Begin(o_->gcot, 3));
  const int64_t kcol = d_.H * d_.D, vcol = (d_.H + d_.Hkv) * d_.D;
  const TensorView& qkv = qkv_->value;
  RETURN_IF_ERROR(ws.Run(AttnDesc(Op::kAttentionBwdBwd),
                         {Heads(qkv, 0, d_.H), Heads(qkv, kcol, d_.Hkv), Heads(qkv, vcol, d_.Hkv),
                          Heads(o_->value, 0, d_.H), Heads(o_->cot.view, 0, d_.H), lse_, dvec_,
                          Heads(grot, 0, d_.H), Heads(grot, kcol, d_.Hkv), Heads(g, vcol, d_.Hkv)},
                         {Heads(aqkv.view, 0, d_.H), Heads(aqkv.view, kcol, d_.Hkv),
                          Heads(aqkv.view, vcol, d_.Hkv), Heads(gout.view, 0, d_.H)}));
  RETURN_IF_ERROR(RotateQK(ws, aqkv.view, aqkv.view, /*inverse=*/true));  // âq = Rᵀ ∂Qr
  RETURN_IF_ERROR(ws.Finish(aqkv));
  return ws.Finish(gout);
}

}  // namespace flashtick
