// Zero-padding copies between a strided [B, T, heads, D] tensor and a contiguous
// [B, T, heads, Dp] one, for the head dims that run on a wider kernel
// (head_dim_padding.h). Bandwidth-bound and O(N·D); one thread per output element.
#include <cuda_runtime.h>

#include "kernels/cuda/attention/head_dim_padding.h"
#include "kernels/cuda/cuda_check.h"

namespace flashtick::cuda {
namespace {

__global__ void head_dim_copy_kernel(const HeadDimCopyParams p) {
  const int64_t n = p.B * p.T * p.H * p.dst_cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int c = static_cast<int>(i % p.dst_cols);
    const int64_t row = i / p.dst_cols;  // (b, t, h) in row-major order
    const int64_t h = row % p.H, t = (row / p.H) % p.T, b = row / (p.H * p.T);
    const uint16_t x = c < p.src_cols ? p.src[b * p.src_b + t * p.src_t + h * p.src_h + c] : uint16_t{0};
    p.dst[b * p.dst_b + t * p.dst_t + h * p.dst_h + c] = x;
  }
}

}  // namespace

absl::Status LaunchHeadDimCopy(const HeadDimCopyParams& p, cudaStream_t stream) {
  const int64_t n = p.B * p.T * p.H * p.dst_cols;
  if (n == 0) return absl::OkStatus();
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
  head_dim_copy_kernel<<<blocks, kThreads, 0, stream>>>(p);
  RETURN_IF_CUDA_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
