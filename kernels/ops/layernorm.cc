// LayerNorm forward argument validation shared by every backend (kernels/ops/layernorm.h).
#include "kernels/ops/layernorm.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/elementwise.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {

namespace {
absl::Status CheckVector(const TensorView& t, int64_t n, DType dtype, const char* name) {
  if (t.rank != 1 || t.dim(0) != n || (n > 1 && t.stride(0) != 1) || t.dtype != dtype)
    return absl::InvalidArgumentError(absl::StrCat("layernorm: ", name, " must be contiguous ",
                                                   DTypeName(dtype), "[", n, "], got ",
                                                   t.DebugString()));
  if (n > 0 && t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("layernorm: ", name, " has no data"));
  return absl::OkStatus();
}
}  // namespace

absl::Status CheckLayerNormArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                absl::Span<const TensorView> out, RowLayout* x_rows,
                                RowLayout* y_rows) {
  RETURN_IF_ERROR(CheckArity("layernorm", in.size(), 3, out.size(), 3));
  const TensorView &x = in[0], &gamma = in[1], &beta = in[2];
  const TensorView &y = out[0], &mean = out[1], &rstd = out[2];
  ASSIGN_OR_RETURN(*x_rows, RowsOf(x, "layernorm", "X"));
  ASSIGN_OR_RETURN(*y_rows, RowsOf(y, "layernorm", "Y"));
  RETURN_IF_ERROR(CheckSameShape(x, y, "layernorm", "X", "Y"));
  if (x.dtype != desc.dtype)
    return absl::InvalidArgumentError(absl::StrCat("layernorm: X is ", x.DebugString(),
                                                   " but the op dtype is ", DTypeName(desc.dtype)));
  if (x_rows->cols < 1) return absl::InvalidArgumentError("layernorm: rows must not be empty");
  if (!(desc.layernorm.eps > 0))
    return absl::InvalidArgumentError(absl::StrCat("layernorm: eps must be > 0, got ",
                                                   desc.layernorm.eps));
  const DType p = ParamDType(desc.dtype);
  RETURN_IF_ERROR(CheckVector(gamma, x_rows->cols, p, "gamma"));
  RETURN_IF_ERROR(CheckVector(beta, x_rows->cols, p, "beta"));
  RETURN_IF_ERROR(CheckVector(mean, x_rows->rows, p, "mean"));
  RETURN_IF_ERROR(CheckVector(rstd, x_rows->rows, p, "rstd"));
  RETURN_IF_ERROR(CheckInPlaceOrDisjoint(y, x, "layernorm", "Y", "X"));
  for (const TensorView* o : {&y, &mean, &rstd})
    for (const TensorView* i : {&gamma, &beta})
      if (MayOverlap(*o, *i))
        return absl::InvalidArgumentError("layernorm: outputs must not overlap gamma or beta");
  if (MayOverlap(mean, rstd) || MayOverlap(mean, x) || MayOverlap(rstd, x) ||
      MayOverlap(mean, y) || MayOverlap(rstd, y))
    return absl::InvalidArgumentError("layernorm: mean and rstd must not overlap X, Y or each other");
  return absl::OkStatus();
}

}  // namespace flashtick
