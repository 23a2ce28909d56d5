// The benchmark's --check: before timing, our CUDA forward and backward on small
// shapes (ragged T, causal and not, D 64 and 128) against the CPU backend in fp64,
// by normalised MSE per output (bf16 1e-4, fp16 1e-5: the parity defaults). The full
// table, with the FlashAttention bound, is tests/parity (parity_gpu).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/cuda/cuda_device.h"

namespace flashtick::bench {

// Prints one line per checked shape to stderr; an error names the first failure.
// impls: "flash" (ours), "cudnn" (skipped, with a line, in a build without cuDNN),
// "auto" (both).
absl::Status CheckAttentionParity(const std::shared_ptr<cuda::CudaDevice>& dev, DType dtype,
                                  const std::vector<std::string>& impls = {"flash"});

}  // namespace flashtick::bench
