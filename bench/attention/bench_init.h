// Device-side input generation for the attention benchmark: filling 4 × 200M
// elements on the host would dominate the run at N = 262,144.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace flashtick::bench {

// n standard-normal-like values (Box–Muller on a counter hash of (seed, i)), rounded to
// bf16 (bf16 = true) or fp16, written to the 16-bit device buffer p on `stream`.
cudaError_t FillNormal16(void* p, int64_t n, bool bf16, uint64_t seed, cudaStream_t stream);

}  // namespace flashtick::bench
