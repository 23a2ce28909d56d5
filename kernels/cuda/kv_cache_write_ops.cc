// Host launcher of kv_cache_write on CUDA (kernels/ops/kv_cache.h): shared validation,
// then one bit-copy kernel (kv_cache_write.cu).
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops/kv_cache.h"

namespace flashtick::cuda {

// in: k, v [B, 1, Hkv, D], row int32   out: Kcache, Vcache [B, Tk, Hkv, D]
absl::Status KvCacheWrite(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  KvCacheWriteShape s;
  RETURN_IF_ERROR(CheckKvCacheWriteArgs(desc, in, out, &s));
  KvCacheWriteParams p;
  p.B = s.B, p.Tk = s.Tk, p.Hkv = s.Hkv, p.D = s.D;
  for (int i = 0; i < 2; ++i) {
    p.src[i] = in[i].data;
    p.dst[i] = out[i].data;
    p.src_s[i][0] = in[i].stride(0), p.src_s[i][1] = in[i].stride(2);
    for (int d = 0; d < 3; ++d) p.dst_s[i][d] = out[i].stride(d);
  }
  p.row = in[2].as<const int32_t>();
  RETURN_IF_CUDA_ERROR(LaunchKvCacheWrite(DTypeSize(desc.dtype), p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
