// LayerNorm forward on CUDA (kernels/ops/layernorm.h), one warp per row, fp32:
//   μ = mean(x);  σ² = mean((x − μ)²);  r = 1/√(σ² + eps);  y = γ∘(x − μ)·r + β
// Two-pass variance over the (L1-resident) row rather than E[x²] − μ², which cancels
// when |μ| ≫ σ. Each lane owns 16-byte vectors of the row, strided by the warp. All
// reads of X finish before the first write of Y (the warp reductions are collective),
// so Y may be X.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 128;  // 4 warps, one row each at a time
constexpr int kWarps = kThreads / kWarp;
constexpr int kBlocksPerSm = 16;

template <typename T, int kVec>
__global__ void __launch_bounds__(kThreads) layernorm_kernel(LayerNormParams p) {
  const int lane = threadIdx.x % kWarp;
  const int64_t C = p.cols;
  const float inv_c = 1.0f / static_cast<float>(C);
  for (int64_t row = int64_t{blockIdx.x} * kWarps + threadIdx.x / kWarp; row < p.rows;
       row += int64_t{gridDim.x} * kWarps) {
    const T* x = static_cast<const T*>(p.x.p) + row * p.x.stride;
    T* y = static_cast<T*>(p.y.p) + row * p.y.stride;
    float s = 0.0f;
    for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
      float xv[kVec];
      LoadVec<T, kVec>(x + c, xv);
#pragma unroll
      for (int v = 0; v < kVec; ++v) s += xv[v];
    }
    const float mean = WarpSum(s) * inv_c;
    float q = 0.0f;
    for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
      float xv[kVec];
      LoadVec<T, kVec>(x + c, xv);
#pragma unroll
      for (int v = 0; v < kVec; ++v) q += (xv[v] - mean) * (xv[v] - mean);
    }
    const float r = 1.0f / sqrtf(WarpSum(q) * inv_c + p.eps);
    for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
      float xv[kVec], gm[kVec], bt[kVec], out[kVec];
      LoadVec<T, kVec>(x + c, xv);
      LoadVec<float, kVec>(p.gamma + c, gm);
      LoadVec<float, kVec>(p.beta + c, bt);
#pragma unroll
      for (int v = 0; v < kVec; ++v) out[v] = gm[v] * ((xv[v] - mean) * r) + bt[v];
      StoreVec<T, kVec>(y + c, out);
    }
    if (lane == 0) {
      p.mean[row] = mean;
      p.rstd[row] = r;
    }
  }
}

template <typename T>
cudaError_t LaunchTyped(const LayerNormParams& p, unsigned grid, cudaStream_t stream) {
  constexpr int kVec = kVecOf<T>;
  const int64_t R = p.rows, C = p.cols;
  const bool vec = RowsVectorizable(p.x.p, p.x.stride, C, R, sizeof(T), kVec) &&
                   RowsVectorizable(p.y.p, p.y.stride, C, R, sizeof(T), kVec) &&
                   RowsVectorizable(p.gamma, C, C, 1, sizeof(float), kVec) &&
                   RowsVectorizable(p.beta, C, C, 1, sizeof(float), kVec);
  if (vec)
    layernorm_kernel<T, kVec><<<grid, kThreads, 0, stream>>>(p);
  else
    layernorm_kernel<T, 1><<<grid, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchLayerNorm(DType dtype, const LayerNormParams& p, int num_sms,
                            cudaStream_t stream) {
  if (p.rows == 0 || p.cols == 0) return cudaSuccess;
  const int64_t want = CeilDiv(p.rows, kWarps);
  const int64_t cap = int64_t{num_sms > 0 ? num_sms : 1} * kBlocksPerSm;
  const unsigned grid = static_cast<unsigned>(want < cap ? want : cap);
  switch (dtype) {
    case DType::kF32: return LaunchTyped<float>(p, grid, stream);
    case DType::kBF16: return LaunchTyped<__nv_bfloat16>(p, grid, stream);
    case DType::kF16: return LaunchTyped<__half>(p, grid, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashtick::cuda
