// Validation of unary row-wise ops (Gelu, Softmax), shared by every backend.
#include "kernels/ops/gelu.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/elementwise.h"

namespace flashtick {

absl::Status CheckUnaryRowArgs(const char* op, const OpDesc& desc,
                               absl::Span<const TensorView> in, absl::Span<const TensorView> out,
                               RowLayout* x_rows, RowLayout* y_rows) {
  RETURN_IF_ERROR(CheckArity(op, in.size(), 1, out.size(), 1));
  const TensorView &x = in[0], &y = out[0];
  ASSIGN_OR_RETURN(*x_rows, RowsOf(x, op, "X"));
  ASSIGN_OR_RETURN(*y_rows, RowsOf(y, op, "Y"));
  RETURN_IF_ERROR(CheckSameShape(x, y, op, "X", "Y"));
  if (x.dtype != desc.dtype)
    return absl::InvalidArgumentError(absl::StrCat(op, ": X is ", x.DebugString(),
                                                   " but the op dtype is ", DTypeName(desc.dtype)));
  return CheckInPlaceOrDisjoint(y, x, op, "Y", "X");
}

}  // namespace flashtick
