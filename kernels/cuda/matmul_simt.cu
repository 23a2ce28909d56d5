// Fallback GEMM for the layouts cuBLASLt has no algorithm for (kernels/cuda/matmul.cc
// asks its heuristic first): C = alpha·op(A)·op(B) + beta·C (+ bias [N] on every row),
// row-major, any leading dims and transposes, fp32 accumulation on CUDA cores. In this
// model those layouts are the thin ones: the embedding (K = 6 features, rows of 12 bytes
// in bf16) and the 3-class head (N = 3), where the matmul is memory-bound and tensor
// cores would idle.
// Tiling: a block computes a kTileM × kTileN tile of C; each k-step stages kTileK
// columns of op(A) and rows of op(B) in shared memory as fp32, and each thread
// accumulates a kThreadM × kThreadN register tile.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kTileM = 64, kTileN = 64, kTileK = 16;
constexpr int kThreadM = 4, kThreadN = 4;
constexpr int kThreadsX = kTileN / kThreadN, kThreadsY = kTileM / kThreadM;  // 16 × 16
constexpr int kThreads = kThreadsX * kThreadsY;
static_assert(kTileM * kTileK % kThreads == 0 && kTileN * kTileK % kThreads == 0,
              "every thread stages the same number of elements");

template <typename T>
__global__ void __launch_bounds__(kThreads) gemm_simt_kernel(SimtGemmParams p) {
  __shared__ float As[kTileK][kTileM + 1];  // op(A) tile, k-major; +1 breaks bank conflicts
  __shared__ float Bs[kTileK][kTileN + 1];  // op(B) tile
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int64_t m0 = int64_t{blockIdx.y} * kTileM, n0 = int64_t{blockIdx.x} * kTileN;
  float acc[kThreadM][kThreadN] = {};
  for (int64_t k0 = 0; k0 < p.K; k0 += kTileK) {
    for (int i = tid; i < kTileM * kTileK; i += kThreads) {
      const int mm = i % kTileM, kk = i / kTileM;
      const int64_t m = m0 + mm, k = k0 + kk;
      float v = 0.0f;
      if (m < p.M && k < p.K) v = ToFloat(p.trans_a ? a[k * p.lda + m] : a[m * p.lda + k]);
      As[kk][mm] = v;
    }
    for (int i = tid; i < kTileN * kTileK; i += kThreads) {
      const int nn = i % kTileN, kk = i / kTileN;
      const int64_t n = n0 + nn, k = k0 + kk;
      float v = 0.0f;
      if (n < p.N && k < p.K) v = ToFloat(p.trans_b ? b[n * p.ldb + k] : b[k * p.ldb + n]);
      Bs[kk][nn] = v;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float av[kThreadM], bv[kThreadN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) av[i] = As[kk][threadIdx.y + i * kThreadsY];
#pragma unroll
      for (int j = 0; j < kThreadN; ++j) bv[j] = Bs[kk][threadIdx.x + j * kThreadsX];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int64_t m = m0 + threadIdx.y + i * kThreadsY;
    if (m >= p.M) continue;
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) {
      const int64_t n = n0 + threadIdx.x + j * kThreadsX;
      if (n >= p.N) continue;
      T* out = c + m * p.ldc + n;
      float v = p.alpha * acc[i][j];
      if (p.beta != 0.0f) v += p.beta * ToFloat(*out);  // beta = 0: C is never read (BLAS)
      if (p.bias != nullptr) v += p.bias[n];            // fused bias: C rounded once
      *out = FromFloat<T>(v);
    }
  }
}

}  // namespace

cudaError_t LaunchSimtGemm(DType dtype, const SimtGemmParams& p, cudaStream_t stream) {
  if (p.M == 0 || p.N == 0) return cudaSuccess;
  const int64_t gx = CeilDiv(p.N, kTileN), gy = CeilDiv(p.M, kTileM);
  if (gy > 65535) return cudaErrorInvalidConfiguration;  // M > 4.19M rows: split the call
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  const dim3 block(kThreadsX, kThreadsY);
  switch (dtype) {
    case DType::kF32: gemm_simt_kernel<float><<<grid, block, 0, stream>>>(p); break;
    case DType::kBF16: gemm_simt_kernel<__nv_bfloat16><<<grid, block, 0, stream>>>(p); break;
    case DType::kF16: gemm_simt_kernel<__half><<<grid, block, 0, stream>>>(p); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace flashtick::cuda
