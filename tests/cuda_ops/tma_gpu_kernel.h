// Host entry point of the TMA pipeline GEMM on the GPU (tma_gpu_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace flashtick::testing {

// d_out [64, 64] = A·B with A, B [64, K] row-major 16-bit (bf16) host buffers.
cudaError_t RunTmaPipelineGemm(int K, const uint16_t* a, const uint16_t* b, float* d_out);

}  // namespace flashtick::testing
