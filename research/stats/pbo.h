// Probability of Backtest Overfitting by combinatorially symmetric cross-
// validation (Bailey, Borwein, López de Prado & Zhu 2017, §2.3).
//   M: T×N per-day out-of-sample returns (rows = days, columns = configurations).
//   Cut the rows into S contiguous blocks (S even; sizes differ by at most one
//   day when S ∤ T). For each of the C(S, S/2) ways to pick S/2 blocks as the
//   in-sample set J (the rest J̄ out of sample):
//     n* = argmax_n SR̂(J, n)             (Sharpe ratio of column n on J's rows)
//     r̄  = rank of SR̂(J̄, n*) among SR̂(J̄, ·), 1 = worst … N = best
//     ω̄  = r̄ / (N + 1),  λ = ln(ω̄ / (1 − ω̄))
//   PBO = share of combinations with λ ≤ 0.
// Tie rules (they matter: with N = 3 arms ω̄ ∈ {¼, ½, ¾}, and the median rank,
// λ = 0, decides the gate):
//   1. λ = 0 (the in-sample best lands exactly on the OOS median) counts as
//      overfit, as in the paper's "λ ≤ 0".
//   2. In-sample ties: n* is the lowest column index among the tied maxima
//      (callers list arms from shortest to longest context, so a tie never
//      credits the longer, costlier arm).
//   3. Out-of-sample ties: r̄ is the average of the tied ranks (scipy.stats.
//      rankdata "average"), so a column tied with others gets a fractional rank.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

struct PboResult {
  double pbo = 0;                 // share of λ ≤ 0
  int64_t combinations = 0;       // C(S, S/2)
  int64_t median_ties = 0;        // combinations with λ = 0 exactly (counted as overfit)
  std::vector<double> lambdas;    // per combination, by increasing bitmask of J (bit b = block b)
  std::vector<int64_t> selected;  // how often each column was the in-sample best
  int blocks = 0;
};

// `returns[t][n]`: day t, configuration n. InvalidArgument unless N ≥ 2, S ≥ 2 is
// even, T ≥ S, the rows are rectangular and every value is finite.
absl::StatusOr<PboResult> ProbabilityOfBacktestOverfitting(
    const std::vector<std::vector<double>>& returns, int blocks = 16);

}  // namespace flashtick
