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
#pragma once

#include "trainer/graph_node.h"

namespace flashtick {

struct AttentionDims {
  int64_t B = 0, T = 0, H = 0, Hkv = 0, D = 0;
  float rope_theta = 10000.0f;
  int64_t rotary_dims = -1;  // RopeAttrs::rotary_dims
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

  Activation *qkv_, *o_;
  AttentionDims d_;
  TensorView lse_, dvec_;
};

}  // namespace flashtick
