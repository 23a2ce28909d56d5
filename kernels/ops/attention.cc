// Shape validation and FLOP counts shared by every attention backend.
#include "kernels/ops/attention.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/kv_cache.h"

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

DType AttentionStatsDType(DType data) {
  return (data == DType::kBF16 || data == DType::kF16) ? DType::kF32 : data;
}

double AttentionScale(const AttentionAttrs& attrs, int64_t head_dim) {
  return attrs.scale != 0.0f ? static_cast<double>(attrs.scale)
                             : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

absl::Status CheckAttentionTensor(const char* name, const TensorView& t, int64_t B, int64_t T,
                                  int64_t heads, int64_t D, DType dtype) {
  if (t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("attention: ", name, " has no data"));
  if (t.rank != 4 || t.dim(0) != B || t.dim(1) != T || t.dim(2) != heads || t.dim(3) != D)
    return absl::InvalidArgumentError(absl::StrCat("attention: ", name, " must be [", B, ", ", T,
                                                   ", ", heads, ", ", D, "]; got ",
                                                   t.DebugString()));
  if (t.dtype != dtype)
    return absl::InvalidArgumentError(absl::StrCat("attention: ", name, " must be ",
                                                   DTypeName(dtype), "; got ", t.DebugString()));
  if (t.stride(3) != 1)
    return absl::InvalidArgumentError(
        absl::StrCat("attention: the head dim (last) of ", name, " must be contiguous"));
  return absl::OkStatus();
}

absl::Status CheckAttentionStats(const char* name, const TensorView& t, const AttentionShape& s,
                                 DType dtype) {
  if (t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("attention: ", name, " has no data"));
  if (t.rank != 3 || t.dim(0) != s.B || t.dim(1) != s.H || t.dim(2) != s.T || !t.contiguous())
    return absl::InvalidArgumentError(absl::StrCat("attention: ", name,
                                                   " must be a contiguous [B, H, T] = [", s.B,
                                                   ", ", s.H, ", ", s.T, "]; got ",
                                                   t.DebugString()));
  if (t.dtype != dtype)
    return absl::InvalidArgumentError(absl::StrCat("attention: ", name, " must be ",
                                                   DTypeName(dtype), "; got ", t.DebugString()));
  return absl::OkStatus();
}

absl::Status CheckAttentionArity(Op op, size_t inputs, size_t outputs) {
  size_t want_in = 0, want_out = 0;
  switch (op) {
    case Op::kAttentionFwd: want_in = 3, want_out = 2; break;
    case Op::kAttentionBwd: want_in = 6, want_out = 4; break;
    case Op::kAttentionBwdBwd: want_in = 10, want_out = 4; break;
    case Op::kAttentionDecode:
      // the 4th: its optional workspace; the 5th: its optional kv_length
      want_in = inputs == 4 || inputs == 5 ? inputs : 3, want_out = 1;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(OpName(op), " is not an attention op"));
  }
  if (inputs != want_in || outputs != want_out)
    return absl::InvalidArgumentError(absl::StrCat(OpName(op), " takes ", want_in, " inputs and ",
                                                   want_out, " outputs (kernels/ops/attention.h); got ",
                                                   inputs, " and ", outputs));
  return absl::OkStatus();
}

absl::Status CheckAttentionDecodeArgs(const TensorView& q, const TensorView& k,
                                      const TensorView& v, AttentionShape* shape) {
  if (q.rank != 4 || k.rank != 4 || v.rank != 4)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_decode: q, Kcache, Vcache must be rank 4; got ", q.DebugString(), ", ",
        k.DebugString(), ", ", v.DebugString()));
  if (q.dtype != k.dtype || q.dtype != v.dtype)
    return absl::InvalidArgumentError("attention_decode: q, Kcache, Vcache must share one dtype");
  const int64_t B = q.dim(0), H = q.dim(2), D = q.dim(3), Tk = k.dim(1), Hkv = k.dim(2);
  if (q.dim(1) != 1)
    return absl::InvalidArgumentError(
        absl::StrCat("attention_decode: q must be [B, 1, H, D]; got ", q.DebugString()));
  if (k.dim(0) != B || v.dim(0) != B || v.dim(1) != Tk || v.dim(2) != Hkv || k.dim(3) != D ||
      v.dim(3) != D)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_decode: Kcache and Vcache must be [B=", B, ", Tk, Hkv, D=", D, "] alike; got ",
        k.DebugString(), ", ", v.DebugString()));
  if (B < 1 || H < 1 || D < 1 || Hkv < 1 || Tk < 1)
    return absl::InvalidArgumentError(
        "attention_decode: every dimension must be at least 1 (an empty cache has nothing to "
        "attend to)");
  if (H % Hkv != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_decode: query heads (", H, ") must be a multiple of key/value heads (", Hkv, ")"));
  if (q.stride(3) != 1 || k.stride(3) != 1 || v.stride(3) != 1)
    return absl::InvalidArgumentError("attention_decode: the head dim (last) must be contiguous");
  if (shape) *shape = AttentionShape{B, Tk, H, Hkv, D};
  return absl::OkStatus();
}

absl::Status DecodeKvLengthInput(absl::Span<const TensorView> in, int64_t B,
                                 const TensorView** kv_length) {
  *kv_length = nullptr;
  if (in.size() < 5) return absl::OkStatus();
  RETURN_IF_ERROR(CheckDevicePositions(in[4], B, "attention_decode", "kv_length"));
  *kv_length = &in[4];
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
