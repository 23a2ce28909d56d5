// Argument validation for AddBias, Add and Cast, shared by every backend
// (kernels/ops/elementwise.h).
#include "kernels/ops/elementwise.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {

namespace {
absl::Status CheckDType(const TensorView& t, DType want, const char* op, const char* name) {
  if (t.dtype != want)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be ", DTypeName(want),
                                                   ", got ", t.DebugString()));
  return absl::OkStatus();
}

bool IsFloat(DType d) {
  return d == DType::kF32 || d == DType::kF64 || d == DType::kBF16 || d == DType::kF16;
}
}  // namespace

absl::Status CheckInPlaceOrDisjoint(const TensorView& out, const TensorView& in, const char* op,
                                    const char* out_name, const char* in_name) {
  if (SameView(out, in) || !MayOverlap(out, in)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(op, ": ", out_name, " overlaps ", in_name,
                                                 " without being the same view (in place)"));
}

absl::Status CheckAddBiasArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                              absl::Span<const TensorView> out, RowLayout rows[2]) {
  RETURN_IF_ERROR(CheckArity("add_bias", in.size(), 2, out.size(), 1));
  const TensorView &x = in[0], &b = in[1], &y = out[0];
  ASSIGN_OR_RETURN(rows[0], RowsOf(x, "add_bias", "X"));
  ASSIGN_OR_RETURN(rows[1], RowsOf(y, "add_bias", "Y"));
  RETURN_IF_ERROR(CheckSameShape(x, y, "add_bias", "X", "Y"));
  RETURN_IF_ERROR(CheckDType(x, desc.dtype, "add_bias", "X"));
  RETURN_IF_ERROR(CheckDType(b, ParamDType(desc.dtype), "add_bias", "b"));
  if (b.rank != 1 || b.dim(0) != rows[0].cols || (b.dim(0) > 1 && b.stride(0) != 1))
    return absl::InvalidArgumentError(absl::StrCat("add_bias: b must be contiguous [",
                                                   rows[0].cols, "], got ", b.DebugString()));
  if (b.dim(0) > 0 && b.data == nullptr)
    return absl::InvalidArgumentError("add_bias: b has no data");
  RETURN_IF_ERROR(CheckInPlaceOrDisjoint(y, x, "add_bias", "Y", "X"));
  if (MayOverlap(y, b)) return absl::InvalidArgumentError("add_bias: Y must not overlap b");
  return absl::OkStatus();
}

absl::Status CheckAddArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                          absl::Span<const TensorView> out, RowLayout rows[3]) {
  RETURN_IF_ERROR(CheckArity("add", in.size(), 2, out.size(), 1));
  const TensorView &x = in[0], &y = in[1], &z = out[0];
  ASSIGN_OR_RETURN(rows[0], RowsOf(x, "add", "X"));
  ASSIGN_OR_RETURN(rows[1], RowsOf(y, "add", "Y"));
  ASSIGN_OR_RETURN(rows[2], RowsOf(z, "add", "Z"));
  RETURN_IF_ERROR(CheckSameShape(x, y, "add", "X", "Y"));
  RETURN_IF_ERROR(CheckSameShape(x, z, "add", "X", "Z"));
  RETURN_IF_ERROR(CheckDType(x, desc.dtype, "add", "X"));
  RETURN_IF_ERROR(CheckInPlaceOrDisjoint(z, x, "add", "Z", "X"));
  RETURN_IF_ERROR(CheckInPlaceOrDisjoint(z, y, "add", "Z", "Y"));
  return absl::OkStatus();
}

absl::Status CheckCastArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                           absl::Span<const TensorView> out, RowLayout rows[2]) {
  RETURN_IF_ERROR(CheckArity("cast", in.size(), 1, out.size(), 1));
  const TensorView &x = in[0], &y = out[0];
  ASSIGN_OR_RETURN(rows[0], RowsOf(x, "cast", "X"));
  ASSIGN_OR_RETURN(rows[1], RowsOf(y, "cast", "Y"));
  RETURN_IF_ERROR(CheckSameShape(x, y, "cast", "X", "Y", /*same_dtype=*/false));
  RETURN_IF_ERROR(CheckDType(x, desc.dtype, "cast", "X"));
  if (!IsFloat(x.dtype) || !IsFloat(y.dtype))
    return absl::InvalidArgumentError(absl::StrCat(
        "cast: converts between fp32, fp64, bf16 and fp16; got ", x.DebugString(), " -> ",
        y.DebugString()));
  RETURN_IF_ERROR(CheckInPlaceOrDisjoint(y, x, "cast", "Y", "X"));
  return absl::OkStatus();
}

}  // namespace flashtick
