// Dvec = rowsum(dO∘O) alone (fp32 [B, H, T]), for a backward that does not write it
// itself: cuDNN's SDPA backward computes the same sum internally but keeps it in its
// workspace, while our contract (kernels/ops/attention.h) returns it so the
// backward-over-backward can reuse it. Same math as the pre-pass of our backward
// (flash_bwd_launch.cuh), without its dQ-accumulator zeroing.
#include "kernels/cuda/attention/attention_dvec.h"
#include "kernels/cuda/attention/flash_bwd_launch.cuh"

namespace flashtick::cuda::flash {
namespace {

// One warp per row; lane ℓ sums the pairs at columns 2ℓ, 2ℓ + 64, ... below D, so every
// even head dim cuDNN may run (not only the 64 and 128 of our tiles) is covered.
template <typename Elem>
__global__ void __launch_bounds__(kRowKernelWarps * kWarpSize)
    attention_dvec_kernel(const AttentionBwdParams p) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row_id = static_cast<int64_t>(blockIdx.x) * kRowKernelWarps + threadIdx.x / kWarpSize;
  if (row_id >= static_cast<int64_t>(p.B) * p.T * p.H) return;
  const int h = static_cast<int>(row_id % p.H);
  const int64_t bt = row_id / p.H;
  const int t = static_cast<int>(bt % p.T), b = static_cast<int>(bt / p.T);
  const Elem* o = static_cast<const Elem*>(p.o.ptr) + b * p.o.batch_stride +
                  static_cast<int64_t>(t) * p.o.row_stride + h * p.o.head_stride;
  const Elem* dout = static_cast<const Elem*>(p.dout.ptr) + b * p.dout.batch_stride +
                     static_cast<int64_t>(t) * p.dout.row_stride + h * p.dout.head_stride;
  float d = 0.0f;
  for (int col = 2 * lane; col < p.D; col += 2 * kWarpSize) {
    const float2 ov = UnpackFloat2<Elem>(*reinterpret_cast<const uint32_t*>(o + col));
    const float2 dv = UnpackFloat2<Elem>(*reinterpret_cast<const uint32_t*>(dout + col));
    d += ov.x * dv.x + ov.y * dv.y;
  }
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) d += __shfl_xor_sync(0xffffffffu, d, offset);
  if (lane == 0) p.dvec[(static_cast<int64_t>(b) * p.H + h) * p.T + t] = d;
}

}  // namespace

cudaError_t LaunchAttentionDvec(const AttentionBwdParams& p, cudaStream_t stream) {
  if (p.D <= 0 || p.D % 2 != 0) return cudaErrorInvalidValue;  // lanes read 16-bit pairs
  const int64_t rows = static_cast<int64_t>(p.B) * p.T * p.H;
  const dim3 grid(static_cast<unsigned>((rows + kRowKernelWarps - 1) / kRowKernelWarps));
  const dim3 block(kRowKernelWarps * kWarpSize);
  if (p.dtype == DType::kBF16)
    attention_dvec_kernel<__nv_bfloat16><<<grid, block, 0, stream>>>(p);
  else
    attention_dvec_kernel<__half><<<grid, block, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace flashtick::cuda::flash
