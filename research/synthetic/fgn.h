// Fractional Gaussian noise by circulant embedding (Davies & Harte 1987; Wood &
// Chan 1994) and a Hurst estimate to check it. fGn with Hurst index H has unit
// variance and autocovariance γ(j) = ½(|j+1|^{2H} − 2|j|^{2H} + |j−1|^{2H});
// H > ½ gives long memory (γ decays as j^{2H−2}, not summable).
// Davies–Harte: embed γ(0..M/2) in a circulant of size M (a power of two ≥
// 2(n−1)), λ = FFT(c) ≥ 0 for fGn, Y = FFT(√(λ/M) ⊙ (a + ib)) with a, b iid
// N(0, 1); Re Y[0..n) is an exact fGn sample (Im Y is a second, independent one).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

double FgnAutocovariance(double hurst, int64_t lag);

// n samples of unit-variance fGn. InvalidArgument for H ∉ (0, 1) or n < 1;
// FailedPrecondition if the embedding has a negative eigenvalue beyond rounding.
absl::StatusOr<std::vector<double>> FractionalGaussianNoise(int64_t n, double hurst, uint64_t seed);

// Aggregated-variance estimate of H (Beran 1994, §4.4): Var(block mean at block
// size m) ∝ m^{2H−2}; least squares of log Var on log m for m = 2, 4, ..., with
// at least `min_blocks` blocks each. Needs n ≥ 4·min_blocks.
absl::StatusOr<double> HurstAggregatedVariance(const std::vector<double>& x,
                                               int64_t min_blocks = 64);

}  // namespace flashtick
