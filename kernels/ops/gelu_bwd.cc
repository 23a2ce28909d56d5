// Argument validation for kGeluBwd and kGeluBwdBwd, shared by every backend
// (kernels/ops/gelu_bwd.h).
#include "kernels/ops/gelu_bwd.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

// Every tensor: the shape of in[0], dtype desc.dtype, collapsing to rows.
absl::Status CheckRows(const char* op, const OpDesc& desc, absl::Span<const TensorView> in,
                       absl::Span<const TensorView> out, const char* const* names,
                       GeluBwdLayout* layout) {
  GeluBwdLayout l;
  int k = 0;
  for (auto span : {in, out}) {
    for (const TensorView& t : span) {
      RETURN_IF_ERROR(CheckSameShape(in[0], t, op, names[0], names[k], /*same_dtype=*/false));
      if (t.dtype != desc.dtype)
        return absl::InvalidArgumentError(absl::StrCat(op, ": ", names[k], " must be ",
                                                       DTypeName(desc.dtype), " (desc.dtype); got ",
                                                       t.DebugString()));
      ASSIGN_OR_RETURN(l.rows[k], RowsOf(t, op, names[k]));
      ++k;
    }
  }
  l.count = k;
  l.M = l.rows[0].rows;
  l.C = l.rows[0].cols;
  *layout = l;
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckGeluBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                              absl::Span<const TensorView> out, GeluBwdLayout* layout) {
  constexpr const char* kOp = "gelu_bwd";
  static const char* const kNames[] = {"X", "dY", "dX"};
  RETURN_IF_ERROR(CheckArity(kOp, in.size(), 2, out.size(), 1));
  RETURN_IF_ERROR(CheckRows(kOp, desc, in, out, kNames, layout));
  if (MayOverlap(out[0], in[0]))
    return absl::InvalidArgumentError("gelu_bwd: dX must not overlap X");
  if (MayOverlap(out[0], in[1]) && !SameView(out[0], in[1]))
    return absl::InvalidArgumentError("gelu_bwd: dX must be exactly dY (in place) or separate");
  return absl::OkStatus();
}

absl::Status CheckGeluBwdBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                 absl::Span<const TensorView> out, GeluBwdLayout* layout) {
  constexpr const char* kOp = "gelu_bwd_bwd";
  static const char* const kNames[] = {"X", "dY", "gdX", "∂X", "∂dY"};
  RETURN_IF_ERROR(CheckArity(kOp, in.size(), 3, out.size(), 2));
  RETURN_IF_ERROR(CheckRows(kOp, desc, in, out, kNames, layout));
  for (const TensorView& o : out)
    for (const TensorView& i : in)
      if (MayOverlap(o, i))
        return absl::InvalidArgumentError("gelu_bwd_bwd: outputs must not overlap inputs");
  if (MayOverlap(out[0], out[1]))
    return absl::InvalidArgumentError("gelu_bwd_bwd: ∂X and ∂dY must not overlap");
  return absl::OkStatus();
}

}  // namespace flashtick
