// Argument validation for the softmax cross-entropy ops, shared by every backend
// (kernels/ops/cross_entropy.h).
#include "kernels/ops/cross_entropy.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {
namespace {

// A contiguous vector of M elements (any shape) of dtype `dtype`.
absl::Status RowVector(const char* op, const char* name, const TensorView& t, int64_t M,
                       DType dtype) {
  if (t.numel() != M || !t.contiguous() || t.dtype != dtype)
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", name, " must be a contiguous ", DTypeName(dtype), " tensor of ", M,
                     " elements (one per row); got ", t.DebugString()));
  if (M > 0 && t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " has no data"));
  return absl::OkStatus();
}

// A [..., K] tensor shaped like logits, dtype desc.dtype.
absl::StatusOr<RowLayout> LogitsLike(const char* op, const char* name, const TensorView& t,
                                     const TensorView& logits) {
  RETURN_IF_ERROR(CheckSameShape(logits, t, op, "logits", name));
  return RowsOf(t, op, name);
}

}  // namespace

absl::Status CheckSoftmaxCrossEntropyArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                          absl::Span<const TensorView> out,
                                          CrossEntropyLayout* layout) {
  const char* op = OpName(desc.op);
  size_t want_in = 0, want_out = 0;
  switch (desc.op) {
    case Op::kSoftmaxCrossEntropy:
      want_in = 2, want_out = 1;
      break;
    case Op::kSoftmaxCrossEntropyBwd:
      want_in = 3, want_out = 1;
      break;
    case Op::kSoftmaxCrossEntropyBwdBwd:
      want_in = 4, want_out = 2;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(op, " is not a cross-entropy op"));
  }
  RETURN_IF_ERROR(CheckArity(op, in.size(), want_in, out.size(), want_out));
  const TensorView& logits = in[0];
  if (logits.dtype != desc.dtype)
    return absl::InvalidArgumentError(absl::StrCat(op, ": logits must be ", DTypeName(desc.dtype),
                                                   " (desc.dtype); got ", logits.DebugString()));
  CrossEntropyLayout l;
  ASSIGN_OR_RETURN(l.logits, RowsOf(logits, op, "logits"));
  l.M = l.logits.rows;
  l.K = l.logits.cols;
  if (l.K < 1 && l.M > 0)
    return absl::InvalidArgumentError(absl::StrCat(op, ": logits need at least one class"));
  const DType pdt = ParamDType(desc.dtype);
  RETURN_IF_ERROR(RowVector(op, "labels", in[1], l.M, DType::kI32));
  if (desc.op == Op::kSoftmaxCrossEntropy) {
    RETURN_IF_ERROR(RowVector(op, "loss", out[0], l.M, pdt));
  } else if (desc.op == Op::kSoftmaxCrossEntropyBwd) {
    RETURN_IF_ERROR(RowVector(op, "dloss", in[2], l.M, pdt));
    ASSIGN_OR_RETURN(l.rows2, LogitsLike(op, "dlogits", out[0], logits));
  } else {
    RETURN_IF_ERROR(RowVector(op, "dloss", in[2], l.M, pdt));
    ASSIGN_OR_RETURN(l.rows2, LogitsLike(op, "g", in[3], logits));
    ASSIGN_OR_RETURN(l.rows3, LogitsLike(op, "∂logits", out[0], logits));
    RETURN_IF_ERROR(RowVector(op, "∂dloss", out[1], l.M, pdt));
    if (MayOverlap(out[0], out[1]))
      return absl::InvalidArgumentError(absl::StrCat(op, ": ∂logits and ∂dloss overlap"));
  }
  for (const TensorView& o : out)
    for (const TensorView& i : in)
      if (MayOverlap(o, i))
        return absl::InvalidArgumentError(absl::StrCat(op, ": outputs must not overlap inputs"));
  *layout = l;
  return absl::OkStatus();
}

}  // namespace flashtick
