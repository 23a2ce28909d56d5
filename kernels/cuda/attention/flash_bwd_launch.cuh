// The backward's small kernels and its launch sequence:
//   1. flash_bwd_dot_do_o_kernel: D_i = Σ_d dO_id·O_id (fp32, written to Dvec), and
//      zeroes row i of the fp32 dQ accumulator;
//   2. flash_bwd_kernel (flash_bwd_kernel.cuh): dK, dV per key block, dQ by atomics;
//   3. flash_bwd_convert_dq_kernel: dQ = scale·dQ_acc, rounded to Elem.
// The small kernels give one warp to one (b, t, h) row; each lane owns D/32 adjacent
// elements, read and written as 16-bit pairs.
#pragma once

#include "kernels/cuda/attention/flash_bwd_kernel.cuh"

namespace flashtick::cuda::flash {

inline constexpr int kRowKernelWarps = 8;  // rows per CTA of the row kernels

template <typename Elem, int kHeadDim>
__global__ void __launch_bounds__(kRowKernelWarps * kWarpSize)
    flash_bwd_dot_do_o_kernel(const AttentionBwdParams p) {
  constexpr int kPerLane = kHeadDim / kWarpSize;
  static_assert(kPerLane % 2 == 0, "lanes read 16-bit pairs");
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row_id = static_cast<int64_t>(blockIdx.x) * kRowKernelWarps + threadIdx.x / kWarpSize;
  if (row_id >= static_cast<int64_t>(p.B) * p.T * p.H) return;  // whole warps exit together
  const int h = static_cast<int>(row_id % p.H);
  const int64_t bt = row_id / p.H;  // b·T + t
  const int t = static_cast<int>(bt % p.T), b = static_cast<int>(bt / p.T);
  const Elem* o = static_cast<const Elem*>(p.o.ptr) + b * p.o.batch_stride +
                  static_cast<int64_t>(t) * p.o.row_stride + h * p.o.head_stride;
  const Elem* dout = static_cast<const Elem*>(p.dout.ptr) + b * p.dout.batch_stride +
                     static_cast<int64_t>(t) * p.dout.row_stride + h * p.dout.head_stride;
  float d = 0.0f;
#pragma unroll
  for (int j = 0; j < kPerLane; j += 2) {
    const int col = lane * kPerLane + j;
    const float2 ov = UnpackFloat2<Elem>(*reinterpret_cast<const uint32_t*>(o + col));
    const float2 dv = UnpackFloat2<Elem>(*reinterpret_cast<const uint32_t*>(dout + col));
    d += ov.x * dv.x + ov.y * dv.y;
  }
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) d += __shfl_xor_sync(0xffffffffu, d, offset);
  if (lane == 0) p.dvec[(static_cast<int64_t>(b) * p.H + h) * p.T + t] = d;  // [B, H, T]
  float* acc = p.dq_accum + row_id * kHeadDim;  // [B, T, H, D]: row_id = (b·T + t)·H + h
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) acc[lane * kPerLane + j] = 0.0f;
}

template <typename Elem, int kHeadDim>
__global__ void __launch_bounds__(kRowKernelWarps * kWarpSize)
    flash_bwd_convert_dq_kernel(const AttentionBwdParams p) {
  constexpr int kPerLane = kHeadDim / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row_id = static_cast<int64_t>(blockIdx.x) * kRowKernelWarps + threadIdx.x / kWarpSize;
  if (row_id >= static_cast<int64_t>(p.B) * p.T * p.H) return;
  const int h = static_cast<int>(row_id % p.H);
  const int64_t bt = row_id / p.H;
  const int t = static_cast<int>(bt % p.T), b = static_cast<int>(bt / p.T);
  const float* acc = p.dq_accum + row_id * kHeadDim;
  Elem* dq = static_cast<Elem*>(p.dq.ptr) + b * p.dq.batch_stride +
             static_cast<int64_t>(t) * p.dq.row_stride + h * p.dq.head_stride;
#pragma unroll
  for (int j = 0; j < kPerLane; j += 2) {
    const int col = lane * kPerLane + j;
    *reinterpret_cast<uint32_t*>(dq + col) = PackFloat2<Elem>(acc[col] * p.scale, acc[col + 1] * p.scale);
  }
}

#ifndef FLASHTICK_CUDA_EMULATION
// Enqueues the three backward kernels for one traits choice, element type and masking
// (bench/attention/bwd_tiles_bench.cu times tile variants through this directly).
template <typename Traits, typename Elem, bool kCausal>
cudaError_t RunFlashBwdTyped(const AttentionBwdParams& p, cudaStream_t stream) {
  constexpr int kD = Traits::kHeadDim;
  const int64_t rows = static_cast<int64_t>(p.B) * p.T * p.H;
  const dim3 row_grid(static_cast<unsigned>((rows + kRowKernelWarps - 1) / kRowKernelWarps));
  const dim3 row_block(kRowKernelWarps * kWarpSize);
  flash_bwd_dot_do_o_kernel<Elem, kD><<<row_grid, row_block, 0, stream>>>(p);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  constexpr int kSmem = Traits::kSmemBytes;
  auto main_kernel = flash_bwd_kernel<Traits, Elem, kCausal>;
  err = cudaFuncSetAttribute(main_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (err != cudaSuccess) return err;
  const dim3 grid(p.B * p.Hkv, (p.T + Traits::kBlockN - 1) / Traits::kBlockN);
  main_kernel<<<grid, Traits::kNThreads, kSmem, stream>>>(p);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  flash_bwd_convert_dq_kernel<Elem, kD><<<row_grid, row_block, 0, stream>>>(p);
  return cudaGetLastError();
}

// The variant for p's dtype and masking.
template <typename Traits>
cudaError_t RunFlashBwd(const AttentionBwdParams& p, cudaStream_t stream) {
  const bool bf16 = p.dtype == DType::kBF16;
  if (p.causal)
    return bf16 ? RunFlashBwdTyped<Traits, __nv_bfloat16, true>(p, stream)
                : RunFlashBwdTyped<Traits, __half, true>(p, stream);
  return bf16 ? RunFlashBwdTyped<Traits, __nv_bfloat16, false>(p, stream)
              : RunFlashBwdTyped<Traits, __half, false>(p, stream);
}
#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace flashtick::cuda::flash
