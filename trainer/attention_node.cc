// AttentionNode forward, backward and backward-over-backward (trainer/attention_node.h).
#include "trainer/attention_node.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "kernels/step_shift.h"

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

absl::Status AttentionNode::Shift(Workspace& ws, const TensorView& src, int64_t scol,
                                  const TensorView& dst, int64_t dcol, int64_t width,
                                  bool later) const {
  const TensorView from = ColumnBlock(src, scol, width), to = ColumnBlock(dst, dcol, width);
  const absl::Status s = later ? ShiftStepsLater(*ws.backend(), from, to, d_.B, d_.T)
                               : ShiftStepsEarlier(*ws.backend(), from, to, d_.B, d_.T);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("training graph: attention: ", s.message()));
  return s;
}

absl::Status AttentionNode::Forward(Workspace& ws, GraphParams&) {
  const TensorView& qkv = qkv_->value;
  RETURN_IF_ERROR(RotateQK(ws, qkv, qkv, /*inverse=*/false));  // qkv = (Rq, Rk, v) from here
  const int64_t kcol = d_.H * d_.D, vcol = (d_.H + d_.Hkv) * d_.D, kv = d_.Hkv * d_.D;
  TensorView k = Heads(qkv, kcol, d_.Hkv), v = Heads(qkv, vcol, d_.Hkv);
  if (d_.exclude_self) {  // K̃, Ṽ = S·(Rk, v) in shift scratch columns [0, 2·kv)
    ASSIGN_OR_RETURN(TensorView sh, ws.Scratch(Workspace::kShiftScratch, qkv.dtype, {qkv.dim(0), 2 * kv}));
    RETURN_IF_ERROR(Shift(ws, qkv, kcol, sh, 0, 2 * kv, /*later=*/true));
    k = Heads(sh, 0, d_.Hkv);
    v = Heads(sh, kv, d_.Hkv);
  }
  return ws.Run(AttnDesc(Op::kAttentionFwd), {Heads(qkv, 0, d_.H), k, v},
                {Heads(o_->value, 0, d_.H), lse_});
}

absl::Status AttentionNode::Backward(Workspace& ws, GraphParams&, Sweep s) {
  ASSIGN_OR_RETURN(TensorView dout, ws.Read(o_->Adj(s)));
  ASSIGN_OR_RETURN(Workspace::Dest dqkv, ws.Begin(qkv_->Adj(s), 1));
  TensorView dvec = dvec_;  // kept for the backward-over-backward
  if (s == Sweep::kHvp) {
    ASSIGN_OR_RETURN(dvec, ws.Scratch(2, dvec_.dtype, {d_.B, d_.H, d_.T}));
  }
  const int64_t kcol = d_.H * d_.D, vcol = (d_.H + d_.Hkv) * d_.D, kv = d_.Hkv * d_.D;
  const TensorView& qkv = qkv_->value;
  // The attention's K, V and where its dK, dV go: qkv's blocks and dqkv's, or with
  // exclude_self S·(Rk, v) in shift scratch columns [0, 2·kv) and their cotangents in
  // [2·kv, 4·kv), mapped back into dqkv by Sᵀ below.
  TensorView k = Heads(qkv, kcol, d_.Hkv), v = Heads(qkv, vcol, d_.Hkv);
  TensorView dk = Heads(dqkv.view, kcol, d_.Hkv), dv = Heads(dqkv.view, vcol, d_.Hkv);
  TensorView sh;
  if (d_.exclude_self) {
    ASSIGN_OR_RETURN(sh, ws.Scratch(Workspace::kShiftScratch, qkv.dtype, {qkv.dim(0), 4 * kv}));
    RETURN_IF_ERROR(Shift(ws, qkv, kcol, sh, 0, 2 * kv, /*later=*/true));
    k = Heads(sh, 0, d_.Hkv);
    v = Heads(sh, kv, d_.Hkv);
    dk = Heads(sh, 2 * kv, d_.Hkv);
    dv = Heads(sh, 3 * kv, d_.Hkv);
  }
  RETURN_IF_ERROR(ws.Run(AttnDesc(Op::kAttentionBwd),
                         {Heads(qkv, 0, d_.H), k, v, Heads(o_->value, 0, d_.H), Heads(dout, 0, d_.H), lse_},
                         {Heads(dqkv.view, 0, d_.H), dk, dv, dvec}));
  if (d_.exclude_self) RETURN_IF_ERROR(Shift(ws, sh, 2 * kv, dqkv.view, kcol, 2 * kv, /*later=*/false));
  RETURN_IF_ERROR(RotateQK(ws, dqkv.view, dqkv.view, /*inverse=*/true));  // dq = Rᵀ dQr
  return ws.Finish(dqkv);
}

absl::Status AttentionNode::BackwardBackward(Workspace& ws, GraphParams&) {
  ASSIGN_OR_RETURN(TensorView g, ws.Read(qkv_->gcot));
  ASSIGN_OR_RETURN(TensorView grot, ws.Scratch(1, g.dtype, {g.dim(0), (d_.H + d_.Hkv) * d_.D}));
  RETURN_IF_ERROR(RotateQK(ws, g, grot, /*inverse=*/false));  // gQr = R ĝq, gKr = R ĝk
  ASSIGN_OR_RETURN(Workspace::Dest aqkv, ws.Begin(qkv_->acot, 2));
  ASSIGN_OR_RETURN(Workspace::Dest gout, ws.Begin(o_->gcot, 3));
  const int64_t kcol = d_.H * d_.D, vcol = (d_.H + d_.Hkv) * d_.D, kv = d_.Hkv * d_.D;
  const TensorView& qkv = qkv_->value;
  TensorView k = Heads(qkv, kcol, d_.Hkv), v = Heads(qkv, vcol, d_.Hkv);
  TensorView gk = Heads(grot, kcol, d_.Hkv), gv = Heads(g, vcol, d_.Hkv);
  TensorView ak = Heads(aqkv.view, kcol, d_.Hkv), av = Heads(aqkv.view, vcol, d_.Hkv);
  TensorView sh;
  if (d_.exclude_self) {
    // Shift scratch columns: [0, 2·kv) S·(Rk, v); [2·kv, 4·kv) the tangents S·R ĝk and
    // S·ĝv; [4·kv, 6·kv) the attention's ∂K̃, ∂Ṽ, mapped back into aqkv by Sᵀ below.
    ASSIGN_OR_RETURN(sh, ws.Scratch(Workspace::kShiftScratch, qkv.dtype, {qkv.dim(0), 6 * kv}));
    RETURN_IF_ERROR(Shift(ws, qkv, kcol, sh, 0, 2 * kv, /*later=*/true));
    RETURN_IF_ERROR(Shift(ws, grot, kcol, sh, 2 * kv, kv, /*later=*/true));
    RETURN_IF_ERROR(Shift(ws, g, vcol, sh, 3 * kv, kv, /*later=*/true));
    k = Heads(sh, 0, d_.Hkv);
    v = Heads(sh, kv, d_.Hkv);
    gk = Heads(sh, 2 * kv, d_.Hkv);
    gv = Heads(sh, 3 * kv, d_.Hkv);
    ak = Heads(sh, 4 * kv, d_.Hkv);
    av = Heads(sh, 5 * kv, d_.Hkv);
  }
  RETURN_IF_ERROR(ws.Run(AttnDesc(Op::kAttentionBwdBwd),
                         {Heads(qkv, 0, d_.H), k, v, Heads(o_->value, 0, d_.H),
                          Heads(o_->cot.view, 0, d_.H), lse_, dvec_, Heads(grot, 0, d_.H), gk, gv},
                         {Heads(aqkv.view, 0, d_.H), ak, av, Heads(gout.view, 0, d_.H)}));
  if (d_.exclude_self) RETURN_IF_ERROR(Shift(ws, sh, 4 * kv, aqkv.view, kcol, 2 * kv, /*later=*/false));
  RETURN_IF_ERROR(RotateQK(ws, aqkv.view, aqkv.view, /*inverse=*/true));  // âq = Rᵀ ∂Qr
  RETURN_IF_ERROR(ws.Finish(aqkv));
  return ws.Finish(gout);
}

}  // namespace flashtick
