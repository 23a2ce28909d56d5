// Rope argument validation shared by every backend (kernels/ops/rope.h).
#include "kernels/ops/rope.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/elementwise.h"
#include "kernels/ops/kv_cache.h"
#include "kernels/ops/row_layout.h"

namespace flashtick {

absl::Status CheckRopeArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                           absl::Span<const TensorView> out, RopeShape* shape) {
  RETURN_IF_ERROR(CheckArity("rope", in.size(), in.size() == 2 ? 2 : 1, out.size(), 1));
  if (in.size() == 2) RETURN_IF_ERROR(CheckDevicePositions(in[1], 1, "rope", "position"));
  const TensorView &x = in[0], &y = out[0];
  if (x.rank != 4)
    return absl::InvalidArgumentError(
        absl::StrCat("rope: X must be rank 4 [B, T, H, D], got ", x.DebugString()));
  RETURN_IF_ERROR(CheckSameShape(x, y, "rope", "X", "Y"));
  if (x.dtype != desc.dtype)
    return absl::InvalidArgumentError(absl::StrCat("rope: X is ", x.DebugString(),
                                                   " but the op dtype is ", DTypeName(desc.dtype)));
  for (int i = 0; i < 4; ++i)
    if (x.shape[i] < 0 || x.strides[i] < 0 || y.strides[i] < 0)
      return absl::InvalidArgumentError("rope: dims and strides must be non-negative");
  const int64_t D = x.dim(3);
  if (D % 2 != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("rope: the head dim must be even (pairs are rotated), got ", D));
  if (D > 1 && (x.stride(3) != 1 || y.stride(3) != 1))
    return absl::InvalidArgumentError("rope: the head dim (last) must be contiguous");
  if (x.numel() > 0 && (x.data == nullptr || y.data == nullptr))
    return absl::InvalidArgumentError("rope: X or Y has no data");
  if (!(desc.rope.theta > 0))
    return absl::InvalidArgumentError(absl::StrCat("rope: theta must be > 0, got ", desc.rope.theta));
  if (desc.rope.position_offset < 0)
    return absl::InvalidArgumentError("rope: position_offset must be >= 0");
  const int64_t R = desc.rope.rotary_dims < 0 ? D : desc.rope.rotary_dims;
  if (desc.rope.rotary_dims < -1 || R > D || R % 2 != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "rope: rotary_dims must be -1 (all) or even in [0, D = ", D, "], got ",
        desc.rope.rotary_dims));
  RETURN_IF_ERROR(CheckInPlaceOrDisjoint(y, x, "rope", "Y", "X"));
  if (shape) *shape = RopeShape{x.dim(0), x.dim(1), x.dim(2), D, R};
  return absl::OkStatus();
}

}  // namespace flashtick
