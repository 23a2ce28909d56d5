// Rademacher probes and the probe product on the GPU (kernels/ops/hutchinson.h).
// Rademacher: each thread computes Philox4x32-10 for its element's block of 128
// (kernels/common/philox.h); the 32 threads of a warp share a block and repeat the
// same ten rounds, which costs less than the store it feeds. ProbeProduct: explicitly
// rounded multiply and add (__fmul_rn, __fadd_rn), never contracted into a fused
// multiply-add, so each element is bitwise equal to the CPU reference.
#include "kernels/common/philox.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) rademacher_kernel(float* u, int64_t n, uint64_t seed) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    u[i] = RademacherPositive(seed, i) ? 1.0f : -1.0f;
}

__global__ void __launch_bounds__(kThreads)
    probe_product_kernel(const float* u, const float* hv, const float* a, float* y, int64_t n,
                         float alpha, float beta) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    const float p = __fmul_rn(u[i], hv[i]);
    y[i] = __fmul_rn(alpha, a != nullptr ? __fadd_rn(__fmul_rn(beta, a[i]), p) : p);
  }
}

}  // namespace

cudaError_t LaunchRademacher(float* u, int64_t n, uint64_t seed, int num_sms, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  rademacher_kernel<<<GridFor(n, kThreads, num_sms), kThreads, 0, stream>>>(u, n, seed);
  return cudaGetLastError();
}

cudaError_t LaunchProbeProduct(const float* u, const float* hv, const float* a, float* y,
                               int64_t n, float alpha, float beta, int num_sms,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  probe_product_kernel<<<GridFor(n, kThreads, num_sms), kThreads, 0, stream>>>(u, hv, a, y, n,
                                                                                alpha, beta);
  return cudaGetLastError();
}

}  // namespace flashtick::cuda
