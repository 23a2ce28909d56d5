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
#include "tests/cuda_emu/tma_pipeline_gemm.cuh"

namespace flashtick {
namespace {

constexpr int kTile = testing::kTmaTile;

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
  emu::Launch({1, 1, 1}, testing::kTmaPipelineThreads, testing::TmaPipelineSmemBytes(), [&] {
    testing::TmaPipelineGemm(&map_a, &map_b, k_tiles, d_out.data(), emu::DynamicSmem());
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
