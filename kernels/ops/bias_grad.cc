// Argument validation for kBiasGrad, shared by every backend (kernels/ops/bias_grad.h).
#include "kernels/ops/bias_grad.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {

absl::Status CheckBiasGradArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                               absl::Span<const TensorView> out, RowLayout* dy_rows) {
  RETURN_IF_ERROR(CheckArity("bias_grad", in.size(), 1, out.size(), 1));
  const TensorView& dy = in[0];
  const TensorView& db = out[0];
  ASSIGN_OR_RETURN(RowLayout rows, RowsOf(dy, "bias_grad", "dY"));
  if (dy.dtype != desc.dtype)
    return absl::InvalidArgumentError(absl::StrCat("bias_grad: dY must be ", DTypeName(desc.dtype),
                                                   " (desc.dtype); got ", dy.DebugString()));
  const DType pdt = ParamDType(desc.dtype);
  if (db.rank != 1 || db.dim(0) != rows.cols || !db.contiguous() || db.dtype != pdt)
    return absl::InvalidArgumentError(absl::StrCat("bias_grad: db must be a contiguous ",
                                                   DTypeName(pdt), "[", rows.cols, "]; got ",
                                                   db.DebugString()));
  if (rows.cols > 0 && db.data == nullptr)
    return absl::InvalidArgumentError("bias_grad: db has no data");
  if (MayOverlap(dy, db)) return absl::InvalidArgumentError("bias_grad: db must not overlap dY");
  *dy_rows = rows;
  return absl::OkStatus();
}

}  // namespace flashtick
