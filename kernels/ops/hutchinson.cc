// Argument validation for Rademacher and ProbeProduct, shared by every backend
// (kernels/ops/hutchinson.h).
#include "kernels/ops/hutchinson.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/row_layout.h"

namespace flashtick {

namespace {
absl::Status CheckFlat(const OpDesc& desc, const TensorView& t, const char* op, const char* name,
                       int64_t n, bool need_data) {
  if (t.dtype != desc.dtype || !t.contiguous() || t.numel() != n)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be contiguous ",
                                                   DTypeName(desc.dtype), " with ", n,
                                                   " elements; got ", t.DebugString()));
  if (need_data && n > 0 && t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " has no data"));
  return absl::OkStatus();
}

absl::Status CheckMasterDType(const OpDesc& desc, const char* op) {
  if (desc.dtype != DType::kF32 && desc.dtype != DType::kF64)
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": probes live beside the fp32 (or fp64) master weights; got ", DTypeName(desc.dtype)));
  return absl::OkStatus();
}
}  // namespace

absl::Status CheckRademacherArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                 absl::Span<const TensorView> out, int64_t* n) {
  RETURN_IF_ERROR(CheckArity("rademacher", in.size(), 0, out.size(), 1));
  RETURN_IF_ERROR(CheckMasterDType(desc, "rademacher"));
  *n = out[0].numel();
  return CheckFlat(desc, out[0], "rademacher", "U", *n, true);
}

absl::Status CheckProbeProductArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                   absl::Span<const TensorView> out, int64_t* n) {
  RETURN_IF_ERROR(CheckArity("probe_product", in.size(), 3, out.size(), 1));
  RETURN_IF_ERROR(CheckMasterDType(desc, "probe_product"));
  const TensorView &u = in[0], &hv = in[1], &a = in[2], &y = out[0];
  *n = y.numel();
  const bool reads_a = desc.probe.beta != 0.0;
  RETURN_IF_ERROR(CheckFlat(desc, y, "probe_product", "Y", *n, true));
  RETURN_IF_ERROR(CheckFlat(desc, u, "probe_product", "U", *n, true));
  RETURN_IF_ERROR(CheckFlat(desc, hv, "probe_product", "HV", *n, true));
  if (reads_a || a.data != nullptr)
    RETURN_IF_ERROR(CheckFlat(desc, a, "probe_product", "A", *n, reads_a));
  if (!std::isfinite(desc.probe.alpha) || !std::isfinite(desc.probe.beta))
    return absl::InvalidArgumentError(absl::StrCat("probe_product: alpha and beta must be finite, got ",
                                                   desc.probe.alpha, " and ", desc.probe.beta));
  if (MayOverlap(y, u)) return absl::InvalidArgumentError("probe_product: Y must not overlap U");
  if (!SameView(y, hv) && MayOverlap(y, hv))
    return absl::InvalidArgumentError("probe_product: Y overlaps HV without being HV (in place)");
  if (a.data != nullptr && !SameView(y, a) && MayOverlap(y, a))
    return absl::InvalidArgumentError("probe_product: Y overlaps A without being A (in place)");
  return absl::OkStatus();
}

}  // namespace flashtick
