// Softmax cross-entropy on CUDA (kernels/ops/cross_entropy.h), one warp per row, fp32,
// softmax stabilised by the row max:
//   p = softmax(z);  loss = logsumexp(z) − z[y]
//   Bwd:     dz = dloss·(p − onehot(y))
//   BwdBwd:  ∂z = dloss·p∘(g − ⟨p, g⟩);  ∂dloss = ⟨p − onehot(y), g⟩ = ⟨p, g⟩ − g[y]
// Rows labelled ignore_label get zeros. A label outside [0, K) cannot be reported from
// a kernel, so its row gets NaN (the contract; the Trainer validates labels on the host).
// The classes of a row are strided over the warp's lanes (K = 3 for the tick head, so a
// row is one short read; any K works).
#include <cmath>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / kWarp;
constexpr int kBlocksPerSm = 16;

enum Which { kFwd = 0, kBwd = 1, kBwdBwd = 2 };

template <typename T, int kWhich>
__global__ void __launch_bounds__(kThreads) cross_entropy_kernel(CrossEntropyParams p) {
  const int lane = threadIdx.x % kWarp;
  const int64_t K = p.classes;
  for (int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / kWarp; row < p.rows;
       row += int64_t{gridDim.x} * kWarpsPerBlock) {
    const int32_t y = p.labels[row];
    const bool ignored = y == p.ignore_label;
    const bool bad = !ignored && (y < 0 || y >= K);
    T* dz = kWhich == kFwd ? nullptr : static_cast<T*>(p.dlogits.p) + row * p.dlogits.stride;
    if (ignored || bad) {
      const float fill = bad ? NAN : 0.0f;
      if (kWhich != kFwd)
        for (int64_t k = lane; k < K; k += kWarp) dz[k] = FromFloat<T>(fill);
      if (kWhich != kBwd && lane == 0) p.loss[row] = fill;
      continue;
    }
    const T* z = static_cast<const T*>(p.logits.p) + row * p.logits.stride;
    float mx = -INFINITY;
    for (int64_t k = lane; k < K; k += kWarp) mx = fmaxf(mx, ToFloat(z[k]));
    mx = WarpMax(mx);
    float sum = 0.0f;
    for (int64_t k = lane; k < K; k += kWarp) sum += expf(ToFloat(z[k]) - mx);
    sum = WarpSum(sum);
    if (kWhich == kFwd) {
      if (lane == 0) p.loss[row] = mx + logf(sum) - ToFloat(z[y]);  // logsumexp(z) − z[y]
      continue;
    }
    const float w = p.dloss[row];
    const float inv_sum = 1.0f / sum;
    if (kWhich == kBwd) {
      for (int64_t k = lane; k < K; k += kWarp) {
        const float pk = expf(ToFloat(z[k]) - mx) * inv_sum;
        dz[k] = FromFloat<T>(w * (pk - (k == y ? 1.0f : 0.0f)));
      }
      continue;
    }
    const T* g = static_cast<const T*>(p.g.p) + row * p.g.stride;
    float pg = 0.0f;
    for (int64_t k = lane; k < K; k += kWarp) pg += expf(ToFloat(z[k]) - mx) * inv_sum * ToFloat(g[k]);
    pg = WarpSum(pg);
    for (int64_t k = lane; k < K; k += kWarp) {
      const float pk = expf(ToFloat(z[k]) - mx) * inv_sum;
      dz[k] = FromFloat<T>(w * pk * (ToFloat(g[k]) - pg));
    }
    if (lane == 0) p.loss[row] = pg - ToFloat(g[y]);
  }
}

template <typename T>
cudaError_t LaunchTyped(int which, const CrossEntropyParams& p, unsigned grid, cudaStream_t stream) {
  switch (which) {
    case kFwd: cross_entropy_kernel<T, kFwd><<<grid, kThreads, 0, stream>>>(p); break;
    case kBwd: cross_entropy_kernel<T, kBwd><<<grid, kThreads, 0, stream>>>(p); break;
    case kBwdBwd: cross_entropy_kernel<T, kBwdBwd><<<grid, kThreads, 0, stream>>>(p); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchSoftmaxCrossEntropy(int which, DType dtype, const CrossEntropyParams& p,
                                      int num_sms, cudaStream_t stream) {
  if (p.rows == 0) return cudaSuccess;
  const int64_t want = CeilDiv(p.rows, kWarpsPerBlock);
  const int64_t cap = int64_t{num_sms > 0 ? num_sms : 1} * kBlocksPerSm;
  const unsigned grid = static_cast<unsigned>(want < cap ? want : cap);
  switch (dtype) {
    case DType::kF32: return LaunchTyped<float>(which, p, grid, stream);
    case DType::kBF16: return LaunchTyped<__nv_bfloat16>(which, p, grid, stream);
    case DType::kF16: return LaunchTyped<__half>(which, p, grid, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashtick::cuda
