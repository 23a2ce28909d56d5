// AttentionNode: o = Attention(RoPE(q), RoPE(k), v), causal, with q, k, v the column
// blocks [H·D | Hkv·D | Hkv·D] of the fused projection qkv [M, (H + 2·Hkv)·D] (heads
// major, head dim minor, as model/transformer.h stores attn.qkv.weight); o [M, H·D].
// The forward rotates the q and k blocks of qkv in place (only attention reads them:
// the QKV projection's backward reads its input, not its output), so qkv then holds
// (Rq, Rk, v), what the backward and backward-over-backward read; it also saves the
// log-sum-exp L and, after the first backward, Dvec = rowsum(dO∘O).
// With R the rotation (orthogonal, so R⁻¹ = Rᵀ = kRope with inverse = true):
//   backward:  (dQr, dKr, dV) = AttentionBwd(Rq, Rk, v, dO);  dq = Rᵀ dQr, dk = Rᵀ dKr
//   bwd-bwd:   with ĝ = (ĝq, ĝk, ĝv) the cotangent of (dq, dk, dv):
//              (∂Qr, ∂Kr, ∂V, ∂dO) = AttentionBwdBwd(Rq, Rk, v, dO; R ĝq, R ĝk, ĝv);
//              âq = Rᵀ ∂Qr, âk = Rᵀ ∂Kr, âv = ∂V, ĝo = ∂dO
// (docs/derivations/attention_bwd_bwd.md for the attention part).
// With exclude_self (ModelConfig::exclude_self_layers) the attention reads the keys and
// values one step later, K̃ = S·Rk and Ṽ = S·v with S the shift of kernels/step_shift.h,
// so row i sees steps before it and a zero sink. S is linear, so the backward maps the
// attention's dK̃, dṼ back with Sᵀ (the shift the other way), and the
// backward-over-backward gives the attention the tangents S·R ĝk and S·ĝv and maps its
// ∂K̃, ∂Ṽ back with Sᵀ; the rotations stay where they are (docs/model.md).
#pragma once

#include "trainer/graph_node.h"

namespace flashtick {

struct AttentionDims {
  int64_t B = 0, T = 0, H = 0, Hkv = 0, D = 0;
  float rope_theta = 10000.0f;
  int64_t rotary_dims = -1;  // RopeAttrs::rotary_dims
  bool exclude_self = false;  // ModelConfig::layer_excludes_self
};

class AttentionNode : public Node {
 public:
  AttentionNode(Activation* qkv, Activation* o, AttentionDims dims, TensorView lse, TensorView dvec)
      : qkv_(qkv), o_(o), d_(dims), lse_(lse), dvec_(dvec) {}
  const char* kind() const override { return "attention"; }
  NodeIo Io() const override { return {{qkv_}, {o_}, {qkv_, o_}}; }
  absl::Status Forward(Workspace& ws, GraphParams& p) override;
  absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) override;
  absl::Status BackwardBackward(Workspace& ws, GraphParams& p) override;

 private:
  // [B, T, heads, D] view of columns [col, col + heads·D) of a [M, width] buffer.
  TensorView Heads(const TensorView& buf, int64_t col, int64_t heads) const;
  // Rotates the q and k column blocks of src into dst (both laid out like qkv).
  absl::Status RotateQK(Workspace& ws, const TensorView& src, const TensorView& dst,
                        bool inverse) const;
  OpDesc AttnDesc(Op op) const;
  // exclude_self: columns [dcol, dcol + width) of dst = columns [scol, scol + width) of
  // src moved one step later (ShiftStepsLater) or earlier (its adjoint), per sequence.
  absl::Status Shift(Workspace& ws, const TensorView& src, int64_t scol, const TensorView& dst,
                     int64_t dcol, int64_t width, bool later) const;

  Activation *qkv_, *o_;
  AttentionDims d_;
  TensorView lse_, dvec_;
};

}  // namespace flashtick
