// Argument and hyperparameter validation for kAdamW and kSophiaH, shared by every
// backend (kernels/ops/optimizer.h).
#include "kernels/ops/optimizer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/row_layout.h"

namespace flashtick {
namespace {

absl::Status CheckHyper(const OpDesc& desc) {
  const OptimizerAttrs& a = desc.optimizer;
  const char* op = OpName(desc.op);
  auto bad = [&](const char* what, double value) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, ", got ", value));
  };
  if (!(a.lr >= 0.0f) || !std::isfinite(a.lr)) return bad("lr must be finite and >= 0", a.lr);
  if (!(a.beta1 >= 0.0f && a.beta1 < 1.0f)) return bad("beta1 must be in [0, 1)", a.beta1);
  if (!(a.beta2 >= 0.0f && a.beta2 < 1.0f)) return bad("beta2 must be in [0, 1)", a.beta2);
  if (!(a.weight_decay >= 0.0f) || !std::isfinite(a.weight_decay))
    return bad("weight_decay must be finite and >= 0", a.weight_decay);
  if (!std::isfinite(a.grad_scale)) return bad("grad_scale must be finite", a.grad_scale);
  // ε > 0 for Sophia-H too: with ε = 0, m = 0 and h <= 0 the step would be 0/0.
  if (!(a.eps > 0.0f)) return bad("eps must be > 0", a.eps);
  if (desc.op == Op::kAdamW) {
    if (a.step < 1) return bad("step must be >= 1 (1-based, for bias correction)", a.step);
  } else {
    if (!(a.rho > 0.0f) || !std::isfinite(a.rho)) return bad("rho must be finite and > 0", a.rho);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckOptimizerArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                absl::Span<const TensorView> out, int64_t* n, bool* has_hhat) {
  const char* op = OpName(desc.op);
  if (desc.op != Op::kAdamW && desc.op != Op::kSophiaH)
    return absl::InvalidArgumentError(absl::StrCat(op, " is not an optimizer op"));
  const size_t want_in = desc.op == Op::kAdamW ? 1 : 2;
  RETURN_IF_ERROR(CheckArity(op, in.size(), want_in, out.size(), 3));
  if (desc.dtype != DType::kF32 && desc.dtype != DType::kF64)
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": master weights and optimizer state are fp32 (or fp64 on the CPU); got ",
                     DTypeName(desc.dtype)));
  const TensorView& param = out[0];
  static const char* const kOutNames[2][3] = {{"param", "m", "v"}, {"param", "m", "h"}};
  const char* const* names = kOutNames[desc.op == Op::kAdamW ? 0 : 1];
  bool hhat = desc.op == Op::kSophiaH && in[1].data != nullptr;
  auto check = [&](const TensorView& t, const char* name) -> absl::Status {
    RETURN_IF_ERROR(CheckSameShape(param, t, op, "param", name, /*same_dtype=*/false));
    if (t.dtype != desc.dtype || !t.contiguous())
      return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be contiguous ",
                                                     DTypeName(desc.dtype), "; got ",
                                                     t.DebugString()));
    if (t.numel() > 0 && t.data == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " has no data"));
    return absl::OkStatus();
  };
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(check(out[i], names[i]));
  RETURN_IF_ERROR(check(in[0], "grad"));
  if (hhat) RETURN_IF_ERROR(check(in[1], "hhat"));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < i; ++j)
      if (MayOverlap(out[i], out[j]))
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": ", names[j], " and ", names[i], " overlap"));
    for (size_t k = 0; k < in.size(); ++k)
      if (MayOverlap(out[i], in[k]))
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": ", names[i], " overlaps an input (grad or hhat)"));
  }
  RETURN_IF_ERROR(CheckHyper(desc));
  *n = param.numel();
  *has_hhat = hhat;
  return absl::OkStatus();
}

}  // namespace flashtick
