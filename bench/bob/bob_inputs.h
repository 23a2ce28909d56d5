// Device-side inputs for the bob benchmark: seeded normal bf16 tensors, and the
// forward statistics the op takes as inputs (O, L, Dvec), from a plain warp-per-row
// CUDA attention forward (fp32 online softmax; O rounded to bf16 as a forward stores
// it, Dvec = rowsum(dO∘O) from that rounded O as the first backward computes it).
// Layouts: Q, O, dO [B, T, H, D]; K, V [B, T, Hkv, D] (contiguous); L, Dvec [B, H, T].
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace flashtick::bench {

// x[i] = bf16 of a standard normal draw keyed by (seed, i) (counter-based, any order).
cudaError_t FillNormalBf16(void* x, int64_t n, uint64_t seed, cudaStream_t stream);

// D ∈ {64, 128, 256}.
cudaError_t ForwardStatsBf16(const void* q, const void* k, const void* v, const void* dout, void* o,
                             float* lse, float* dvec, int B, int T, int H, int Hkv, int D,
                             bool causal, float scale, cudaStream_t stream);

}  // namespace flashtick::bench
