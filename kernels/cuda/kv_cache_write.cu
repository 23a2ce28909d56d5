// Decode cache write on CUDA (kernels/ops/kv_cache.h): one thread per element of the new
// K and V rows, copied as raw bits (no conversion, so every dtype is exact). The row
// index is read from device memory by every thread, so the launch's arguments are the
// same at every step and a captured decode step replays at the next row; an index
// outside the cache writes nothing (the kernel cannot report it).
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 256;

template <typename Bits>
__global__ void __launch_bounds__(kThreads) kv_cache_write_kernel(KvCacheWriteParams p) {
  const int64_t r = *p.row;
  if (r < 0 || r >= p.Tk) return;
  const int64_t per = p.B * p.Hkv * p.D, n = 2 * per;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int which = i < per ? 0 : 1;
    const int64_t e = i - which * per;
    const int64_t d = e % p.D, bh = e / p.D, h = bh % p.Hkv, b = bh / p.Hkv;
    const Bits* src = static_cast<const Bits*>(p.src[which]);
    Bits* dst = static_cast<Bits*>(p.dst[which]);
    dst[b * p.dst_s[which][0] + r * p.dst_s[which][1] + h * p.dst_s[which][2] + d] =
        src[b * p.src_s[which][0] + h * p.src_s[which][1] + d];
  }
}

}  // namespace

cudaError_t LaunchKvCacheWrite(size_t elem_bytes, const KvCacheWriteParams& p, int num_sms,
                               cudaStream_t stream) {
  const int64_t n = 2 * p.B * p.Hkv * p.D;
  if (n == 0) return cudaSuccess;
  const unsigned grid = GridFor(n, kThreads, num_sms);
  switch (elem_bytes) {
    case 2: kv_cache_write_kernel<uint16_t><<<grid, kThreads, 0, stream>>>(p); break;
    case 4: kv_cache_write_kernel<uint32_t><<<grid, kThreads, 0, stream>>>(p); break;
    case 8: kv_cache_write_kernel<uint64_t><<<grid, kThreads, 0, stream>>>(p); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace flashtick::cuda
