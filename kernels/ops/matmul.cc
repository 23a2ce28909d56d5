// Matmul argument validation shared by every backend (kernels/ops/matmul.h).
#include "kernels/ops/matmul.h"

#include "absl/strings/str_cat.h"
#include "kernels/ops/param_dtype.h"
#include "kernels/ops/row_layout.h"

namespace flashtick {

namespace {
absl::Status CheckOperand(const TensorView& t, DType dtype, const char* name) {
  if (t.rank != 2)
    return absl::InvalidArgumentError(
        absl::StrCat("matmul: ", name, " must be rank 2, got ", t.DebugString()));
  if (t.dtype != dtype)
    return absl::InvalidArgumentError(absl::StrCat("matmul: ", name, " is ", t.DebugString(),
                                                   " but the op dtype is ", DTypeName(dtype)));
  if (t.dim(0) < 0 || t.dim(1) < 0)
    return absl::InvalidArgumentError(absl::StrCat("matmul: ", name, " has a negative dim"));
  if (t.dim(1) > 1 && t.stride(1) != 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul: the last dim of ", name, " must be contiguous, got stride ", t.stride(1)));
  if (t.dim(0) > 1 && t.stride(0) < t.dim(1))
    return absl::InvalidArgumentError(absl::StrCat("matmul: rows of ", name, " overlap (row stride ",
                                                   t.stride(0), " < ", t.dim(1), ")"));
  if (t.numel() > 0 && t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("matmul: ", name, " has no data"));
  return absl::OkStatus();
}
}  // namespace

absl::Status CheckMatmulArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                             absl::Span<const TensorView> out, MatmulShape* shape) {
  const bool has_bias = desc.matmul.bias;
  if (absl::Status s = CheckArity("matmul", in.size(), has_bias ? 3 : 2, out.size(), 1); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(
        s.message(), has_bias ? " (attrs.bias: in is A, B, b)" : " (a bias b needs attrs.bias)"));
  if (desc.matmul.gelu && desc.matmul.beta != 0.0f)
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul: attrs.gelu needs beta = 0 (GELU of an accumulated C is no layer's output); got beta = ",
        desc.matmul.beta));
  const TensorView &a = in[0], &b = in[1], &c = out[0];
  for (auto [t, name] : {std::pair{&a, "A"}, {&b, "B"}, {&c, "C"}})
    if (absl::Status s = CheckOperand(*t, desc.dtype, name); !s.ok()) return s;
  const bool ta = desc.matmul.trans_a, tb = desc.matmul.trans_b;
  const int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1);
  const int64_t Kb = tb ? b.dim(1) : b.dim(0), N = tb ? b.dim(0) : b.dim(1);
  if (K != Kb)
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul: inner dims differ: op(A) is [", M, ", ", K, "] (trans_a=", ta, ") but op(B) is [",
        Kb, ", ", N, "] (trans_b=", tb, ")"));
  if (c.dim(0) != M || c.dim(1) != N)
    return absl::InvalidArgumentError(absl::StrCat("matmul: C must be [", M, ", ", N, "], got ",
                                                   c.DebugString()));
  if (MayOverlap(c, a) || MayOverlap(c, b))
    return absl::InvalidArgumentError("matmul: C must not overlap A or B");
  if (has_bias) {
    const TensorView& bias = in[2];
    const DType want = ParamDType(desc.dtype);
    if (bias.dtype != want)
      return absl::InvalidArgumentError(absl::StrCat("matmul: bias b must be ", DTypeName(want),
                                                     " (ParamDType of ", DTypeName(desc.dtype),
                                                     "), got ", bias.DebugString()));
    if (bias.rank != 1 || bias.dim(0) != N || (N > 1 && bias.stride(0) != 1))
      return absl::InvalidArgumentError(absl::StrCat("matmul: bias b must be contiguous [", N,
                                                     "] (C's columns), got ", bias.DebugString()));
    if (N > 0 && bias.data == nullptr)
      return absl::InvalidArgumentError("matmul: bias b has no data");
    if (MayOverlap(c, bias)) return absl::InvalidArgumentError("matmul: C must not overlap b");
  }
  if (shape) *shape = MatmulShape{M, N, K};
  return absl::OkStatus();
}

}  // namespace flashtick
