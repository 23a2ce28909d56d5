// Regime-switching synthetic returns and the exact forward filter that bounds
// what any model can know from the last N steps (docs/research/protocol.md,
// "Synthetic days with known answers").
//   s_t ∈ {−1, +1} flips with probability p per step (a symmetric two-state
//   Markov chain, stationary ½/½); r_t = μ·s_t + σ·ε_t, ε_t iid N(0, 1).
// Forward filter in log-odds ℓ = log P(s=+1)/P(s=−1) (Hamilton 1989):
//   predict:  π⁻ = (1−p)·π + p·(1−π)
//   update:   ℓ ← logit(π⁻) + 2μ·r_t/σ²    (the Gaussian likelihood ratio)
// Run on a window of the last N returns from the stationary prior, it is the
// Bayes posterior of s_t given exactly those N observations; predicting s_{t+1}
// by the sign of the one-step prediction is the best any context-N model can do.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ticks/features.h"

namespace flashtick {

struct RegimeConfig {
  int64_t steps_per_day = kSessionSeconds;
  int num_days = 1;
  double flip_prob = 1.0 / 4000.0;  // p
  double sigma_bps = 1.0;           // σ
  double mu_over_sigma = 0.02;      // μ/σ
  double spread_bps = 1.0;
  uint64_t seed = 1;
};

struct RegimeData {
  std::vector<SessionGrid> days;
  std::vector<int8_t> state;       // s_t over the concatenated steps
  std::vector<double> return_bps;  // r_t (r_0 is drawn but not applied to the price)
};

absl::StatusOr<RegimeData> GenerateRegimeDays(const RegimeConfig& cfg);

// P(s_t = +1 | r_{t−N+1..t}) starting from the stationary prior (½) before the
// window; N is clipped at the start of the series. O(N) per call.
double RegimePosterior(const std::vector<double>& r, int64_t t, int64_t n, const RegimeConfig& c);

struct FilterCeiling {
  int64_t context = 0;
  int64_t evaluated = 0;  // steps scored
  double accuracy = 0;    // share of steps where sign(P(s_{t+1}=+1) − ½) = s_{t+1}
  double expected = 0;    // mean of max(P, 1−P): the Bayes accuracy the filter expects
};

// The exact-filter accuracy ceiling for context n, scored at every `stride`-th
// step t ≥ first (predicting s_{t+1}). Cost O(evaluated · n).
FilterCeiling RegimeFilterCeiling(const RegimeData& d, const RegimeConfig& c, int64_t n,
                                  int64_t first, int64_t stride);

}  // namespace flashtick
