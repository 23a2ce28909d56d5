// The wgmma tile GEMM (tests/cuda_emu/wgmma_tile_gemm.cuh) on the GPU: one CTA of one
// warpgroup, compiled for sm_90a only (wgmma is in the "a" feature set). Host entry
// point for tests/cuda_ops/wgmma_gpu_test.cc; no Abseil or gtest in this file.
#include <cuda_runtime.h>

#include "tests/cuda_emu/wgmma_tile_gemm.cuh"
#include "tests/cuda_ops/wgmma_gpu_kernel.h"

namespace flashtick::testing {
namespace {

template <typename Elem>
__global__ void __launch_bounds__(cuda::sm90::kWarpgroupThreads)
    wgmma_tile_gemm_kernel(WgmmaCase c, bool accumulate, const uint16_t* a, const uint16_t* b,
                           const float* d_init, float* d_out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  WgmmaTileGemm<Elem>(c, accumulate, a, b, d_init, d_out, smem);
}

}  // namespace

cudaError_t RunWgmmaTileGemm(WgmmaCase c, bool bf16, bool accumulate, const uint16_t* a,
                             const uint16_t* b, const float* d_init, float* d_out) {
  constexpr size_t kTile = size_t(kWgmmaTile) * kWgmmaTile;
  uint16_t *da = nullptr, *db = nullptr;
  float *dd = nullptr, *dout = nullptr;
  cudaError_t err = cudaMalloc(&da, kTile * 2);
  if (err == cudaSuccess) err = cudaMalloc(&db, kTile * 2);
  if (err == cudaSuccess) err = cudaMalloc(&dd, kTile * 4);
  if (err == cudaSuccess) err = cudaMalloc(&dout, kTile * 4);
  if (err == cudaSuccess) err = cudaMemcpy(da, a, kTile * 2, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(db, b, kTile * 2, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(dd, d_init, kTile * 4, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) {
    const int smem = 2 * kWgmmaTileBytes;
    if (bf16)
      wgmma_tile_gemm_kernel<__nv_bfloat16><<<1, cuda::sm90::kWarpgroupThreads, smem>>>(
          c, accumulate, da, db, dd, dout);
    else
      wgmma_tile_gemm_kernel<__half><<<1, cuda::sm90::kWarpgroupThreads, smem>>>(
          c, accumulate, da, db, dd, dout);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaMemcpy(d_out, dout, kTile * 4, cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
  cudaFree(dout);
  return err;
}

}  // namespace flashtick::testing
