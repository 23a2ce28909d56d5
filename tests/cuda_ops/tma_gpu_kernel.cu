// The TMA + mbarrier pipeline GEMM (tests/cuda_emu/tma_pipeline_gemm.cuh) on the GPU,
// built for sm_90a only. Host entry point for tests/cuda_ops/tma_gpu_test.cc.
#include <cuda_runtime.h>

#include "tests/cuda_emu/tma_pipeline_gemm.cuh"
#include "tests/cuda_ops/tma_gpu_kernel.h"

namespace flashtick::testing {
namespace {

__global__ void __launch_bounds__(kTmaPipelineThreads)
    tma_pipeline_kernel(const __grid_constant__ cuda::sm90::TmaDesc map_a,
                        const __grid_constant__ cuda::sm90::TmaDesc map_b, int k_tiles, float* d_out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  TmaPipelineGemm(&map_a, &map_b, k_tiles, d_out, smem);
}

}  // namespace

cudaError_t RunTmaPipelineGemm(int K, const uint16_t* a, const uint16_t* b, float* d_out) {
  const size_t ab = size_t(kTmaTile) * K * 2, dbytes = size_t(kTmaTile) * kTmaTile * 4;
  uint16_t *da = nullptr, *db = nullptr;
  float* dd = nullptr;
  cudaError_t err = cudaMalloc(&da, ab);
  if (err == cudaSuccess) err = cudaMalloc(&db, ab);
  if (err == cudaSuccess) err = cudaMalloc(&dd, dbytes);
  if (err == cudaSuccess) err = cudaMemcpy(da, a, ab, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(db, b, ab, cudaMemcpyHostToDevice);
  cuda::sm90::TmaDesc map_a{}, map_b{};
  if (err == cudaSuccess) err = cuda::sm90::MakeTmaDesc2d(&map_a, da, K, kTmaTile, K, kTmaTile, kTmaTile, true);
  if (err == cudaSuccess) err = cuda::sm90::MakeTmaDesc2d(&map_b, db, K, kTmaTile, K, kTmaTile, kTmaTile, true);
  if (err == cudaSuccess) {
    constexpr int kSmem = TmaPipelineSmemBytes();
    err = cudaFuncSetAttribute(tma_pipeline_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (err == cudaSuccess) {
      tma_pipeline_kernel<<<1, kTmaPipelineThreads, kSmem>>>(map_a, map_b, (K + kTmaTile - 1) / kTmaTile, dd);
      err = cudaGetLastError();
    }
  }
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaMemcpy(d_out, dd, dbytes, cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
  return err;
}

}  // namespace flashtick::testing
