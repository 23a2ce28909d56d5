// The TMA + mbarrier pipeline GEMM (tests/cuda_emu/tma_emu_test.cc says what it checks),
// the same code on the CPU emulator and on an sm_90a GPU (tests/cuda_ops/tma_gpu_test.cc).
// A producer warp loads 64 × 64 tiles of A and B by TMA (128-byte swizzle) into two
// stages with full and empty barriers; a consumer warpgroup runs wgmma on each stage.
// Run by kWarpgroupThreads + 32 threads with TmaPipelineSmemBytes() of shared memory,
// 1,024-byte aligned.
#pragma once

#include <cstdint>

#include "kernels/cuda/attention/sm90/tma.cuh"

namespace flashtick::testing {

inline constexpr int kTmaTile = 64, kTmaStages = 2, kTmaStageBytes = 2 * kTmaTile * kTmaTile * 2;
inline constexpr int kTmaPipelineThreads = cuda::sm90::kWarpgroupThreads + 32;
constexpr int TmaPipelineSmemBytes() { return kTmaStages * kTmaStageBytes + 64; }

// d_out [64, 64] row-major fp32 = A·B over k_tiles tiles of 64 (A [64, K], B [64, K]).
__device__ inline void TmaPipelineGemm(const cuda::sm90::TmaDesc* map_a, const cuda::sm90::TmaDesc* map_b,
                                       int k_tiles, float* d_out, unsigned char* smem) {
  using cuda::sm90::GmmaDesc;
  using cuda::sm90::GmmaDescAdvance;
  using cuda::sm90::SmemSwizzle;
  const int tid = static_cast<int>(threadIdx.x);
  auto* full = reinterpret_cast<uint64_t*>(smem + kTmaStages * kTmaStageBytes);
  uint64_t* empty = full + kTmaStages;
  if (tid == 0)
    for (int s = 0; s < kTmaStages; ++s) {
      cuda::sm90::MbarInit(&full[s], 1);
      cuda::sm90::MbarInit(&empty[s], cuda::sm90::kWarpgroupThreads);
    }
  __syncthreads();
  if (tid >= cuda::sm90::kWarpgroupThreads) {  // the producer warp; one lane issues
    if (tid != cuda::sm90::kWarpgroupThreads) return;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kTmaStages, round = kt / kTmaStages;
      if (round > 0) cuda::sm90::MbarWait(&empty[s], (round - 1) & 1);  // consumers are done with it
      cuda::sm90::MbarArriveExpectTx(&full[s], kTmaStageBytes);
      unsigned char* stage = smem + s * kTmaStageBytes;
      cuda::sm90::TmaLoad2d(stage, map_a, kt * kTmaTile, 0, &full[s]);
      cuda::sm90::TmaLoad2d(stage + kTmaStageBytes / 2, map_b, kt * kTmaTile, 0, &full[s]);
    }
    return;
  }
  const int w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
  float d[32];
  cuda::sm90::WgmmaFence();
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kTmaStages, round = kt / kTmaStages;
    cuda::sm90::MbarWait(&full[s], round & 1);
    unsigned char* stage = smem + s * kTmaStageBytes;
    const uint64_t da = GmmaDesc(cuda::sm90::SmemAddress(stage), SmemSwizzle::k128B, 16, 1024);
    const uint64_t db = GmmaDesc(cuda::sm90::SmemAddress(stage + kTmaStageBytes / 2), SmemSwizzle::k128B, 16, 1024);
    for (int ks = 0; ks < kTmaTile / 16; ++ks)
      cuda::sm90::Wgmma64x64Ss<__nv_bfloat16, false>(d, GmmaDescAdvance(da, 32 * ks),
                                                    GmmaDescAdvance(db, 32 * ks), kt > 0 || ks > 0);
    cuda::sm90::WgmmaCommit();
    cuda::sm90::WgmmaWait<0>();
    cuda::sm90::MbarArrive(&empty[s]);  // this stage may be loaded again
  }
  for (int j = 0; j < 8; ++j)
    for (int v = 0; v < 4; ++v)
      d_out[(16 * w + g + 8 * (v / 2)) * kTmaTile + 8 * j + 2 * t + v % 2] = d[4 * j + v];
}

}  // namespace flashtick::testing
