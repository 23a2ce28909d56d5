// Row softmax on CUDA (kernels/ops/softmax.h), one warp per row, fp32:
//   y_n = exp(x_n − max) / Σ_k exp(x_k − max)
// Three sweeps over the row (max, sum, write). fmaxf ignores NaN like the CPU's
// std::max, and the sum then turns the row NaN; a row of −inf gives NaN (−inf − −inf),
// as the contract says. All reads finish before the first write (the warp reductions
// are collective), so Y may be X.
#include <cmath>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarp;
constexpr int kBlocksPerSm = 16;

// No __launch_bounds__: with it, sm_90 ptxas spills 12 bytes in the fp32 variant at
// 40 registers (measured with -Xptxas -v); without it, none.
template <typename T, int kVec>
__global__ void softmax_kernel(int64_t rows, int64_t cols, RowArg xa, RowArg ya) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t row = int64_t{blockIdx.x} * kWarps + threadIdx.x / kWarp; row < rows;
       row += int64_t{gridDim.x} * kWarps) {
    const T* x = static_cast<const T*>(xa.p) + row * xa.stride;
    T* y = static_cast<T*>(ya.p) + row * ya.stride;
    float mx = -INFINITY;
    for (int64_t c = lane * kVec; c < cols; c += kWarp * kVec) {
      float xv[kVec];
      LoadVec<T, kVec>(x + c, xv);
#pragma unroll
      for (int v = 0; v < kVec; ++v) mx = fmaxf(mx, xv[v]);
    }
    mx = WarpMax(mx);
    float sum = 0.0f;
    for (int64_t c = lane * kVec; c < cols; c += kWarp * kVec) {
      float xv[kVec];
      LoadVec<T, kVec>(x + c, xv);
#pragma unroll
      for (int v = 0; v < kVec; ++v) sum += expf(xv[v] - mx);
    }
    const float inv = 1.0f / WarpSum(sum);
    for (int64_t c = lane * kVec; c < cols; c += kWarp * kVec) {
      float xv[kVec], out[kVec];
      LoadVec<T, kVec>(x + c, xv);
#pragma unroll
      for (int v = 0; v < kVec; ++v) out[v] = expf(xv[v] - mx) * inv;
      StoreVec<T, kVec>(y + c, out);
    }
  }
}

template <typename T>
cudaError_t LaunchTyped(int64_t rows, int64_t cols, RowArg x, RowArg y, unsigned grid,
                        cudaStream_t stream) {
  constexpr int kVec = kVecOf<T>;
  if (RowsVectorizable(x.p, x.stride, cols, rows, sizeof(T), kVec) &&
      RowsVectorizable(y.p, y.stride, cols, rows, sizeof(T), kVec))
    softmax_kernel<T, kVec><<<grid, kThreads, 0, stream>>>(rows, cols, x, y);
  else
    softmax_kernel<T, 1><<<grid, kThreads, 0, stream>>>(rows, cols, x, y);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchSoftmax(DType dtype, int64_t rows, int64_t cols, RowArg x, RowArg y,
                          int num_sms, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  const int64_t want = CeilDiv(rows, kWarps);
  const int64_t cap = int64_t{num_sms > 0 ? num_sms : 1} * kBlocksPerSm;
  const unsigned grid = static_cast<unsigned>(want < cap ? want : cap);
  switch (dtype) {
    case DType::kF32: return LaunchTyped<float>(rows, cols, x, y, grid, stream);
    case DType::kBF16: return LaunchTyped<__nv_bfloat16>(rows, cols, x, y, grid, stream);
    case DType::kF16: return LaunchTyped<__half>(rows, cols, x, y, grid, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashtick::cuda
