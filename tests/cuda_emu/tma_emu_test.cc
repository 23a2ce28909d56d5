// TMA and mbarrier (kernels/cuda/attention/sm90/tma.cuh) on the CPU emulator, in the
// pipeline FlashAttention-3 uses: a producer warp loads 64 × 64 tiles of A and B with TMA
// (128-byte swizzle) into a ring of two stages, each with a "full" barrier (1 arrival
// plus the TMA's bytes) and an "empty" one (the consumers' 128 arrivals); a consumer
// warpgroup waits on full, runs four wgmma on the stage, and releases it through empty.
// D = A·B over K = 256 (four stages' worth, so each stage is reused once) must equal a CPU
// GEMM, and tiles past the tensor's edge must arrive as zeros (K = 200 case).
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/half.h"
#include "kernels/cuda/attention/sm90/tma.cuh"

namespace flashtick {
namespace {

using cuda::sm90::GmmaDesc;
using cuda::sm90::GmmaDescAdvance;
using cuda::sm90::SmemSwizzle;

constexpr int kTile = 64, kStages = 2, kStageBytes = 2 * kTile * kTile * 2;  // A and B tiles

void RunPipeline(int K) {
  SCOPED_TRACE(::testing::Message() << "K = " << K);
  std::mt19937 rng(static_cast<uint32_t>(K));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<uint16_t> a(kTile * K), b(kTile * K);  // A [64, K], B [64 (N), K], row-major
  for (auto& x : a) x = DoubleToBf16Bits(normal(rng));
  for (auto& x : b) x = DoubleToBf16Bits(normal(rng));
  std::vector<float> d_out(kTile * kTile, NAN);
  const cuda::sm90::TmaDesc map_a = cuda::sm90::MakeTmaDesc2d(a.data(), K, kTile, K, kTile, kTile, true);
  const cuda::sm90::TmaDesc map_b = cuda::sm90::MakeTmaDesc2d(b.data(), K, kTile, K, kTile, kTile, true);
  const int k_tiles = (K + kTile - 1) / kTile;
  constexpr int kThreads = cuda::sm90::kWarpgroupThreads + 32;  // consumers, then the producer warp
  const size_t smem_bytes = kStages * kStageBytes + 64;
  emu::Launch({1, 1, 1}, kThreads, smem_bytes, [&] {
    const int tid = static_cast<int>(threadIdx.x);
    unsigned char* smem = emu::DynamicSmem();
    auto* full = reinterpret_cast<uint64_t*>(smem + kStages * kStageBytes);
    uint64_t* empty = full + kStages;
    if (tid == 0)
      for (int s = 0; s < kStages; ++s) {
        cuda::sm90::MbarInit(&full[s], 1);
        cuda::sm90::MbarInit(&empty[s], cuda::sm90::kWarpgroupThreads);
      }
    __syncthreads();
    if (tid >= cuda::sm90::kWarpgroupThreads) {  // the producer warp; one lane issues
      if (tid != cuda::sm90::kWarpgroupThreads) return;
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages, round = kt / kStages;
        if (round > 0) cuda::sm90::MbarWait(&empty[s], (round - 1) & 1);  // consumers are done with it
        cuda::sm90::MbarArriveExpectTx(&full[s], kStageBytes);
        unsigned char* stage = smem + s * kStageBytes;
        cuda::sm90::TmaLoad2d(stage, &map_a, kt * kTile, 0, &full[s]);
        cuda::sm90::TmaLoad2d(stage + kStageBytes / 2, &map_b, kt * kTile, 0, &full[s]);
      }
      return;
    }
    const int w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
    float d[32];
    cuda::sm90::WgmmaFence();
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages, round = kt / kStages;
      cuda::sm90::MbarWait(&full[s], round & 1);
      unsigned char* stage = smem + s * kStageBytes;
      const uint64_t da = GmmaDesc(cuda::sm90::SmemAddress(stage), SmemSwizzle::k128B, 16, 1024);
      const uint64_t db = GmmaDesc(cuda::sm90::SmemAddress(stage + kStageBytes / 2), SmemSwizzle::k128B, 16, 1024);
      for (int ks = 0; ks < kTile / 16; ++ks)
        cuda::sm90::Wgmma64x64Ss<__nv_bfloat16, false>(d, GmmaDescAdvance(da, 32 * ks),
                                                      GmmaDescAdvance(db, 32 * ks), kt > 0 || ks > 0);
      cuda::sm90::WgmmaCommit();
      cuda::sm90::WgmmaWait<0>();
      cuda::sm90::MbarArrive(&empty[s]);  // this stage may be loaded again
    }
    for (int j = 0; j < 8; ++j)
      for (int v = 0; v < 4; ++v)
        d_out[(16 * w + g + 8 * (v / 2)) * kTile + 8 * j + 2 * t + v % 2] = d[4 * j + v];
  });
  for (int m = 0; m < kTile; ++m)
    for (int n = 0; n < kTile; ++n) {
      double want = 0;
      for (int k = 0; k < K; ++k)
        want += double(Bf16BitsToFloat(a[m * K + k])) * Bf16BitsToFloat(b[n * K + k]);
      ASSERT_NEAR(d_out[m * kTile + n], want, 1e-3) << "(" << m << ", " << n << ")";
    }
}

TEST(TmaEmuTest, TwoStagePipelineOverFourTiles) { RunPipeline(256); }

// K = 200: the last box reaches past the tensor's 200 columns; TMA fills those with zeros.
TEST(TmaEmuTest, BoxesPastTheEdgeAreZeroFilled) { RunPipeline(200); }

}  // namespace
}  // namespace flashtick
