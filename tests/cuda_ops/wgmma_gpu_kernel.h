// Host entry point of the wgmma tile GEMM on the GPU (wgmma_gpu_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tests/cuda_emu/wgmma_tile_case.h"

namespace flashtick::testing {

// d_out = d_init·accumulate + A·B on the current device (tests/cuda_emu/wgmma_tile_gemm.cuh
// gives the layouts); host buffers of 64 × 64.
cudaError_t RunWgmmaTileGemm(WgmmaCase c, bool bf16, bool accumulate, const uint16_t* a,
                             const uint16_t* b, const float* d_init, float* d_out);

}  // namespace flashtick::testing
