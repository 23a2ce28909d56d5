// Launch template of the FlashBoB kernels: picks the traits for a head dim, sets the
// dynamic shared-memory limit and runs pass 1 then pass 2 on one stream (stream order
// is the only synchronisation pass 2 needs: it reads the c, e that pass 1 wrote).
// Instantiated for {bf16, fp16} × D ∈ {64, 128, 256} in bob_inst_*.cu.
#pragma once

#ifndef FLASHTICK_CUDA_EMULATION
#include <cuda_runtime.h>
#endif

#include "kernels/cuda/attention/bwd_bwd/bob_pass1.cuh"
#include "kernels/cuda/attention/bwd_bwd/bob_pass2.cuh"

namespace flashtick::cuda {
namespace bob {

template <DType kDType>
struct ElementOf;
template <>
struct ElementOf<DType::kBF16> {
  using type = __nv_bfloat16;
};
template <>
struct ElementOf<DType::kF16> {
  using type = __half;
};

// Tiles and buffering per head dim come from BobTileShape (bob_params.h): double
// buffers at D = 64 (pass 1: 121 KB, pass 2: 106 KB of shared memory); single buffers
// keep both passes under an A100's 163 KB a block at D = 128 (145 KB) and at D = 256
// (32 × 32 tiles: 131 KB and 124.5 KB).
template <int kHeadDim>
using Pass1Traits = BobTraits<kHeadDim>;
template <int kHeadDim>
using Pass2Traits = BobTraits<kHeadDim>;

static_assert(Pass1Smem<Pass1Traits<64>>::kBytes <= 163 * 1024, "pass 1 fits an A100 block");
static_assert(Pass1Smem<Pass1Traits<128>>::kBytes <= 163 * 1024, "pass 1 fits an A100 block");
static_assert(Pass2Smem<Pass2Traits<128>>::kBytes <= 163 * 1024, "pass 2 fits an A100 block");
// The D = 256 budget written in bob_params.h and docs/kernels/head_dims.md.
static_assert(Pass1Smem<Pass1Traits<256>>::kBytes == 131 * 1024, "pass 1 at D = 256: 131 KB");
static_assert(Pass2Smem<Pass2Traits<256>>::kBytes == 124 * 1024 + 512, "pass 2 at D = 256");

#ifndef FLASHTICK_CUDA_EMULATION
template <typename Kernel>
cudaError_t LaunchOne(Kernel kernel, dim3 grid, int threads, size_t smem, const BobParams& p,
                      cudaStream_t stream) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  kernel<<<grid, threads, smem, stream>>>(p);
  return cudaGetLastError();
}
#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace bob

#ifndef FLASHTICK_CUDA_EMULATION

template <DType kDType, int kHeadDim>
cudaError_t LaunchBobPasses(const BobParams& p, cudaStream_t stream) {
  using Element = typename bob::ElementOf<kDType>::type;
  using T1 = bob::Pass1Traits<kHeadDim>;
  using T2 = bob::Pass2Traits<kHeadDim>;
  const dim3 grid1((p.T + T1::kBlockM - 1) / T1::kBlockM, p.H, p.B);
  cudaError_t err = bob::LaunchOne(bob::bob_pass1_kernel<Element, T1>, grid1, T1::kThreads,
                                   bob::Pass1Smem<T1>::kBytes, p, stream);
  if (err != cudaSuccess) return err;
  const dim3 grid2((p.T + T2::kBlockM - 1) / T2::kBlockM, p.Hkv, p.B);
  return bob::LaunchOne(bob::bob_pass2_kernel<Element, T2>, grid2, T2::kThreads,
                        bob::Pass2Smem<T2>::kBytes, p, stream);
}
#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace flashtick::cuda
