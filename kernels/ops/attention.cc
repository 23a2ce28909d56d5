// Shape validation and FLOP counts shared by every attention backend.
#include "kernels/ops/attention.h"

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::Status CheckAttentionArgs(const TensorView& q, const TensorView& k, const TensorView& v,
                                AttentionShape* shape) {
  if (q.rank != 4 || k.rank != 4 || v.rank != 4)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention: Q, K, V must be rank 4 [B, T, H, D]; got ", q.DebugString(), ", ",
        k.DebugString(), ", ", v.DebugString()));
  if (q.dtype != k.dtype || q.dtype != v.dtype)
    return absl::InvalidArgumentError("attention: Q, K, V must share one dtype");
  const int64_t B = q.dim(0), T = q.dim(1), H = q.dim(2), D = q.dim(3);
  const int64_t Hkv = k.dim(2);
  if (k.dim(0) != B || v.dim(0) != B || k.dim(1) != T || v.dim(1) != T)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention: K and V must be [B=", B, ", T=", T, ", Hkv, D]; got ", k.DebugString(), ", ",
        v.DebugString()));
  if (v.dim(2) != Hkv || k.dim(3) != D || v.dim(3) != D)
    return absl::InvalidArgumentError("attention: K and V must have the same heads and head dim as Q");
  if (B < 1 || T < 1 || H < 1 || D < 1 || Hkv < 1)
    return absl::InvalidArgumentError("attention: every dimension must be at least 1");
  if (H % Hkv != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention: query heads (", H, ") must be a multiple of key/value heads (", Hkv, ")"));
  if (q.stride(3) != 1 || k.stride(3) != 1 || v.stride(3) != 1)
    return absl::InvalidArgumentError("attention: the head dim (last) must be contiguous");
  if (shape) *shape = AttentionShape{B, T, H, Hkv, D};
  return absl::OkStatus();
}

double AttentionFwdFlops(const AttentionShape& s, bool causal) {
  double f = 4.0 * s.B * s.H * static_cast<double>(s.T) * s.T * s.D;
  return causal ? f / 2 : f;
}

double AttentionBwdFlops(const AttentionShape& s, bool causal) {
  return 2.5 * AttentionFwdFlops(s, causal);
}

}  // namespace flashtick
