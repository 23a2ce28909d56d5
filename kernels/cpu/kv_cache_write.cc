// CPU kv_cache_write (kernels/ops/kv_cache.h): the row index is read from the (host)
// position tensor when the op runs, checked against the cache, then each (b, h) row of
// k and v is copied into it. A byte copy, so every dtype is exact.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/ops/kv_cache.h"

namespace flashtick::cpu {

absl::Status KvCacheWrite(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  (void)ctx;
  KvCacheWriteShape s;
  RETURN_IF_ERROR(CheckKvCacheWriteArgs(desc, in, out, &s));
  const int64_t r = in[2].as<int32_t>()[0];
  if (r < 0 || r >= s.Tk)
    return absl::InvalidArgumentError(absl::StrCat("kv_cache_write: row ", r,
                                                   " is outside the cache's ", s.Tk, " rows"));
  const size_t elem = DTypeSize(desc.dtype), row_bytes = static_cast<size_t>(s.D) * elem;
  for (int i = 0; i < 2; ++i) {
    const TensorView &src = in[i], &dst = out[i];
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t h = 0; h < s.Hkv; ++h)
        std::memcpy(static_cast<char*>(dst.data) +
                        (b * dst.stride(0) + r * dst.stride(1) + h * dst.stride(2)) * elem,
                    static_cast<const char*>(src.data) + (b * src.stride(0) + h * src.stride(2)) * elem,
                    row_bytes);
  }
  return absl::OkStatus();
}

}  // namespace flashtick::cpu
