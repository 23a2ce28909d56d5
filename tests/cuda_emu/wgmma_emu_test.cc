// The Hopper warpgroup MMA layer (kernels/cuda/attention/sm90/wgmma.cuh) on the CPU
// emulator: one warpgroup computes D = A·B (64×64, K = 64, four k16 steps) from tiles it
// wrote into shared memory itself (tests/cuda_emu/wgmma_tile_gemm.cuh says how, and
// which layouts), and the result must equal a CPU GEMM of the same 16-bit values to fp32
// accumulation; fp16 as well as bf16, D accumulated onto itself or overwritten. The same
// tile GEMM runs on an sm_90a GPU in tests/cuda_ops/wgmma_gpu_test.cc.
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/half.h"
#include "tests/cuda_emu/wgmma_tile_gemm.cuh"
#include "tests/cuda_emu/wgmma_reference.h"

namespace flashtick {
namespace {

using testing::WgmmaCase;

template <typename Elem>
void RunCase(WgmmaCase c, bool accumulate) {
  SCOPED_TRACE(::testing::Message() << "case " << static_cast<int>(c) << " accumulate " << accumulate);
  constexpr bool kBf16 = std::is_same_v<Elem, __nv_bfloat16>;
  const testing::WgmmaInputs in = testing::MakeWgmmaInputs(c, kBf16, accumulate);
  std::vector<float> d_out(in.d_init.size(), NAN);
  emu::Launch({1, 1, 1}, cuda::sm90::kWarpgroupThreads, 2 * testing::kWgmmaTileBytes, [&] {
    testing::WgmmaTileGemm<Elem>(c, accumulate, in.a.data(), in.b.data(), in.d_init.data(),
                                 d_out.data(), emu::DynamicSmem());
  });
  const double worst = testing::ExpectWgmmaResult(in, c, kBf16, accumulate, d_out);
  std::printf("wgmma case %d (%s, accumulate %d): max |err| %.2e\n", static_cast<int>(c),
              kBf16 ? "bf16" : "fp16", accumulate, worst);
}

TEST(WgmmaEmuTest, KMajorSwizzled) {
  RunCase<__nv_bfloat16>(WgmmaCase::kKMajorSw128, false);
  RunCase<__half>(WgmmaCase::kKMajorSw128, true);
}

TEST(WgmmaEmuTest, BMnMajorSwizzled) {
  RunCase<__nv_bfloat16>(WgmmaCase::kBMnMajorSw128, true);
  RunCase<__half>(WgmmaCase::kBMnMajorSw128, false);
}

TEST(WgmmaEmuTest, AFromRegisters) {
  RunCase<__nv_bfloat16>(WgmmaCase::kARegisters, true);
  RunCase<__half>(WgmmaCase::kARegisters, false);
}

TEST(WgmmaEmuTest, Interleaved) { RunCase<__nv_bfloat16>(WgmmaCase::kInterleave, true); }

TEST(WgmmaEmuTest, AMnMajorSwizzled) {
  RunCase<__nv_bfloat16>(WgmmaCase::kAMnMajorSw128, false);
  RunCase<__half>(WgmmaCase::kAMnMajorSw128, true);
}

// The descriptor's fields land where the PTX ISA's matrix-descriptor format puts them.
TEST(WgmmaEmuTest, DescriptorBits) {
  using cuda::sm90::SmemSwizzle;
  const uint64_t d = cuda::sm90::GmmaDesc(0x1230, SmemSwizzle::k128B, 16, 1024);
  EXPECT_EQ(d & 0x3fff, 0x123u);
  EXPECT_EQ((d >> 16) & 0x3fff, 1u);
  EXPECT_EQ((d >> 32) & 0x3fff, 64u);
  EXPECT_EQ(d >> 62, 1u);
  const uint64_t e = cuda::sm90::GmmaDescAdvance(d, 32);
  EXPECT_EQ(e & 0x3fff, 0x125u);
  EXPECT_EQ(e >> 14, d >> 14);  // nothing but the start address moves
}

}  // namespace
}  // namespace flashtick
