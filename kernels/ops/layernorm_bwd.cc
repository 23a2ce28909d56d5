// Argument validation for kLayerNormBwd and kLayerNormBwdBwd, shared by every backend
// (kernels/ops/layernorm_bwd.h).
#include "kernels/ops/layernorm_bwd.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {
namespace {

// A row tensor [..., C] of dtype `dtype` with the same shape as X.
absl::StatusOr<RowLayout> RowTensor(const char* op, const char* name, const TensorView& t,
                                    const TensorView& x, DType dtype) {
  RETURN_IF_ERROR(CheckSameShape(x, t, op, "X", name, /*same_dtype=*/false));
  if (t.dtype != dtype)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be ", DTypeName(dtype),
                                                   " (desc.dtype); got ", t.DebugString()));
  return RowsOf(t, op, name);
}

// A contiguous parameter-shaped tensor [C].
absl::Status ParamTensor(const char* op, const char* name, const TensorView& t, int64_t C,
                         DType dtype) {
  if (t.rank != 1 || t.dim(0) != C || !t.contiguous() || t.dtype != dtype)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be a contiguous ",
                                                   DTypeName(dtype), "[", C, "]; got ",
                                                   t.DebugString()));
  if (C > 0 && t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " has no data"));
  return absl::OkStatus();
}

absl::Status NoOverlap(const char* op, absl::Span<const TensorView> in,
                       absl::Span<const TensorView> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    for (const TensorView& t : in)
      if (MayOverlap(out[i], t))
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": output ", i, " overlaps an input; outputs must be separate"));
    for (size_t j = 0; j < i; ++j)
      if (MayOverlap(out[i], out[j]))
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": outputs ", j, " and ", i, " overlap"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckLayerNormBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                   absl::Span<const TensorView> out, LayerNormBwdLayout* layout) {
  constexpr const char* kOp = "layernorm_bwd";
  RETURN_IF_ERROR(CheckArity(kOp, in.size(), 3, out.size(), 3));
  LayerNormBwdLayout l;
  ASSIGN_OR_RETURN(l.x, RowTensor(kOp, "X", in[0], in[0], desc.dtype));
  ASSIGN_OR_RETURN(l.dy, RowTensor(kOp, "dY", in[2], in[0], desc.dtype));
  ASSIGN_OR_RETURN(l.dx, RowTensor(kOp, "dX", out[0], in[0], desc.dtype));
  l.M = l.x.rows;
  l.C = l.x.cols;
  const DType pdt = ParamDType(desc.dtype);
  RETURN_IF_ERROR(ParamTensor(kOp, "gamma", in[1], l.C, pdt));
  RETURN_IF_ERROR(ParamTensor(kOp, "dgamma", out[1], l.C, pdt));
  RETURN_IF_ERROR(ParamTensor(kOp, "dbeta", out[2], l.C, pdt));
  RETURN_IF_ERROR(NoOverlap(kOp, in, out));
  if (!(desc.layernorm.eps > 0.0f))
    return absl::InvalidArgumentError(
        absl::StrCat(kOp, ": eps must be > 0, got ", desc.layernorm.eps));
  *layout = l;
  return absl::OkStatus();
}

absl::Status CheckLayerNormBwdBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                      absl::Span<const TensorView> out,
                                      LayerNormBwdLayout* layout) {
  constexpr const char* kOp = "layernorm_bwd_bwd";
  RETURN_IF_ERROR(CheckArity(kOp, in.size(), 6, out.size(), 3));
  LayerNormBwdLayout l;
  ASSIGN_OR_RETURN(l.x, RowTensor(kOp, "X", in[0], in[0], desc.dtype));
  ASSIGN_OR_RETURN(l.dy, RowTensor(kOp, "dY", in[2], in[0], desc.dtype));
  ASSIGN_OR_RETURN(l.gx, RowTensor(kOp, "gX", in[3], in[0], desc.dtype));
  ASSIGN_OR_RETURN(l.dx2, RowTensor(kOp, "∂X", out[0], in[0], desc.dtype));
  ASSIGN_OR_RETURN(l.ddy, RowTensor(kOp, "∂dY", out[2], in[0], desc.dtype));
  l.M = l.x.rows;
  l.C = l.x.cols;
  const DType pdt = ParamDType(desc.dtype);
  RETURN_IF_ERROR(ParamTensor(kOp, "gamma", in[1], l.C, pdt));
  RETURN_IF_ERROR(ParamTensor(kOp, "g_gamma", in[4], l.C, pdt));
  RETURN_IF_ERROR(ParamTensor(kOp, "g_beta", in[5], l.C, pdt));
  RETURN_IF_ERROR(ParamTensor(kOp, "∂gamma", out[1], l.C, pdt));
  RETURN_IF_ERROR(NoOverlap(kOp, in, out));
  if (!(desc.layernorm.eps > 0.0f))
    return absl::InvalidArgumentError(
        absl::StrCat(kOp, ": eps must be > 0, got ", desc.layernorm.eps));
  *layout = l;
  return absl::OkStatus();
}

}  // namespace flashtick
