// kv_cache_write argument validation shared by every backend (kernels/ops/kv_cache.h).
#include "kernels/ops/kv_cache.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/row_layout.h"

namespace flashtick {

absl::Status CheckDevicePositions(const TensorView& t, int64_t min_elems, const char* op,
                                  const char* name) {
  if (t.dtype != DType::kI32)
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", name, " must be int32, got ", t.DebugString()));
  if (t.numel() < min_elems)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " needs at least ",
                                                   min_elems, " elements, got ", t.DebugString()));
  if (t.rank > 0 && t.numel() > 1 && t.stride(t.rank - 1) != 1)
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", name, " must be contiguous, got ", t.DebugString()));
  if (min_elems > 0 && t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " has no data"));
  return absl::OkStatus();
}

absl::Status CheckKvCacheWriteArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                   absl::Span<const TensorView> out, KvCacheWriteShape* shape) {
  RETURN_IF_ERROR(CheckArity("kv_cache_write", in.size(), 3, out.size(), 2));
  const TensorView &k = in[0], &v = in[1], &kc = out[0], &vc = out[1];
  if (k.rank != 4 || kc.rank != 4)
    return absl::InvalidArgumentError(absl::StrCat(
        "kv_cache_write: k and Kcache must be rank 4, got ", k.DebugString(), " and ",
        kc.DebugString()));
  const int64_t B = k.dim(0), Hkv = k.dim(2), D = k.dim(3), Tk = kc.dim(1);
  if (k.dim(1) != 1)
    return absl::InvalidArgumentError(
        absl::StrCat("kv_cache_write: k is one row per sequence [B, 1, Hkv, D], got ",
                     k.DebugString()));
  if (Tk < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("kv_cache_write: the cache has no rows: ", kc.DebugString()));
  RETURN_IF_ERROR(CheckAttentionTensor("k", k, B, 1, Hkv, D, desc.dtype));
  RETURN_IF_ERROR(CheckAttentionTensor("v", v, B, 1, Hkv, D, desc.dtype));
  RETURN_IF_ERROR(CheckAttentionTensor("Kcache", kc, B, Tk, Hkv, D, desc.dtype));
  RETURN_IF_ERROR(CheckAttentionTensor("Vcache", vc, B, Tk, Hkv, D, desc.dtype));
  RETURN_IF_ERROR(CheckDevicePositions(in[2], 1, "kv_cache_write", "row"));
  if (shape) *shape = KvCacheWriteShape{B, Tk, Hkv, D};
  return absl::OkStatus();
}

}  // namespace flashtick
