// Inputs and the CPU check of the wgmma tile GEMM (tests/cuda_emu/wgmma_tile_gemm.cuh),
// shared by its emulator and GPU tests: 16-bit normal inputs, an fp32 starting D, and
// D = D_init·accumulate + A·B in fp64 from the same 16-bit values, compared to fp32
// accumulation (|err| ≤ 1e-3 at K = 64 with entries of order 1).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/half.h"
#include "tests/cuda_emu/wgmma_tile_case.h"

namespace flashtick::testing {

struct WgmmaInputs {
  std::vector<uint16_t> a, b;  // 64 × 64 each (layouts: wgmma_tile_gemm.cuh)
  std::vector<float> d_init;
};

inline double Wgmma16ToDouble(bool bf16, uint16_t h) {
  return bf16 ? Bf16BitsToFloat(h) : HalfBitsToFloat(h);
}

inline WgmmaInputs MakeWgmmaInputs(WgmmaCase c, bool bf16, bool accumulate) {
  constexpr int kT = kWgmmaTile;
  std::mt19937 rng(static_cast<uint32_t>(c) * 7 + accumulate + (bf16 ? 0 : 100));
  std::normal_distribution<double> normal(0.0, 1.0);
  WgmmaInputs in{std::vector<uint16_t>(kT * kT), std::vector<uint16_t>(kT * kT),
                 std::vector<float>(kT * kT)};
  for (auto& x : in.a) x = bf16 ? DoubleToBf16Bits(normal(rng)) : DoubleToHalfBits(normal(rng));
  for (auto& x : in.b) x = bf16 ? DoubleToBf16Bits(normal(rng)) : DoubleToHalfBits(normal(rng));
  for (auto& x : in.d_init) x = static_cast<float>(normal(rng));
  return in;
}

// Checks d_out element by element; returns the largest |error|.
inline double ExpectWgmmaResult(const WgmmaInputs& in, WgmmaCase c, bool bf16, bool accumulate,
                                const std::vector<float>& d_out) {
  constexpr int kT = kWgmmaTile;
  const bool b_mn = c == WgmmaCase::kBMnMajorSw128, a_mn = c == WgmmaCase::kAMnMajorSw128;
  double worst = 0;
  for (int m = 0; m < kT; ++m)
    for (int n = 0; n < kT; ++n) {
      double want = accumulate ? in.d_init[m * kT + n] : 0.0;
      for (int k = 0; k < kT; ++k)
        want += Wgmma16ToDouble(bf16, a_mn ? in.a[k * kT + m] : in.a[m * kT + k]) *
                Wgmma16ToDouble(bf16, b_mn ? in.b[k * kT + n] : in.b[n * kT + k]);
      const double got = d_out[m * kT + n];
      worst = std::max(worst, std::fabs(want - got));
      EXPECT_NEAR(got, want, 1e-3) << "(" << m << ", " << n << ")";
      if (!(std::fabs(got - want) <= 1e-3)) return worst;  // one message, not 4,096
    }
  return worst;
}

}  // namespace flashtick::testing
