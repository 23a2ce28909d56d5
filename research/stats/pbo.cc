// CSCV (see pbo.h). Per block and column the sums Σx and Σx² are precomputed,
// so each combination costs O(S·N): C(16, 8) = 12,870 combinations are instant.
// The Sharpe ratio of a set of rows is mean/sd (sd with n−1; moments.h); a
// constant column scores 0 (zero mean) or ±inf, which still ranks consistently.
#include "research/stats/pbo.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

double SharpeFromSums(double n, double s, double ss) {
  if (n < 2) return 0.0;
  const double mean = s / n;
  const double var = (ss - s * mean) / (n - 1);
  if (!(var > 1e-30 * (mean * mean + 1e-300))) {
    return mean == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), mean);
  }
  return mean / std::sqrt(var);
}

}  // namespace

absl::StatusOr<PboResult> ProbabilityOfBacktestOverfitting(
    const std::vector<std::vector<double>>& m, int blocks) {
  const int64_t t_rows = static_cast<int64_t>(m.size());
  const int64_t n_cols = t_rows > 0 ? static_cast<int64_t>(m[0].size()) : 0;
  if (n_cols < 2) {
    return absl::InvalidArgumentError("PBO: need at least two configurations (columns)");
  }
  if (blocks < 2 || blocks % 2 != 0 || blocks > 24) {
    return absl::InvalidArgumentError(
        absl::StrCat("PBO: the number of blocks S=", blocks, " must be even, in 2..24"));
  }
  if (t_rows < blocks) {
    return absl::InvalidArgumentError(absl::StrCat("PBO: ", t_rows, " days cannot fill S=", blocks,
                                                   " blocks; use fewer blocks or more test days"));
  }
  for (int64_t t = 0; t < t_rows; ++t) {
    if (static_cast<int64_t>(m[t].size()) != n_cols) {
      return absl::InvalidArgumentError(
          absl::StrCat("PBO: row ", t, " has ", m[t].size(), " columns, row 0 has ", n_cols));
    }
    for (double v : m[t]) {
      if (!std::isfinite(v))
        return absl::InvalidArgumentError(absl::StrCat("PBO: row ", t, " not finite"));
    }
  }
  // Block b holds rows [start_b, start_{b+1}); the first T mod S blocks get one extra.
  std::vector<double> cnt(blocks, 0), sum(blocks * n_cols, 0), sq(blocks * n_cols, 0);
  int64_t row = 0;
  for (int b = 0; b < blocks; ++b) {
    const int64_t size = t_rows / blocks + (b < t_rows % blocks ? 1 : 0);
    for (int64_t i = 0; i < size; ++i, ++row) {
      cnt[b] += 1;
      for (int64_t n = 0; n < n_cols; ++n) {
        sum[b * n_cols + n] += m[row][n];
        sq[b * n_cols + n] += m[row][n] * m[row][n];
      }
    }
  }

  PboResult r;
  r.blocks = blocks;
  r.selected.assign(n_cols, 0);
  int64_t overfit = 0;
  std::vector<double> is_sr(n_cols), oos_sr(n_cols);
  // Enumerate the S/2-subsets J as bitmasks in increasing order (bit b: block b in-sample).
  const uint32_t full = (1u << blocks) - 1;
  for (uint32_t mask = 0; mask <= full; ++mask) {
    if (__builtin_popcount(mask) != blocks / 2) continue;
    for (int64_t n = 0; n < n_cols; ++n) {
      double ci = 0, si = 0, qi = 0, co = 0, so = 0, qo = 0;
      for (int b = 0; b < blocks; ++b) {
        if (mask >> b & 1u) {
          ci += cnt[b], si += sum[b * n_cols + n], qi += sq[b * n_cols + n];
        } else {
          co += cnt[b], so += sum[b * n_cols + n], qo += sq[b * n_cols + n];
        }
      }
      is_sr[n] = SharpeFromSums(ci, si, qi);
      oos_sr[n] = SharpeFromSums(co, so, qo);
    }
    int64_t best = 0;  // tie rule 2: the lowest index among tied maxima
    for (int64_t n = 1; n < n_cols; ++n) {
      if (is_sr[n] > is_sr[best]) best = n;
    }
    // Tie rule 3: average rank = (#below) + (#tied incl. itself + 1)/2.
    int64_t below = 0, tied = 0;
    for (int64_t n = 0; n < n_cols; ++n) {
      below += oos_sr[n] < oos_sr[best];
      tied += oos_sr[n] == oos_sr[best];
    }
    const double rank = static_cast<double>(below) + 0.5 * static_cast<double>(tied + 1);
    const double omega = rank / static_cast<double>(n_cols + 1);
    const double lambda = std::log(omega / (1 - omega));
    // Tie rule 1: λ ≤ 0 is overfit. ω̄ = ½ exactly when 2·rank = N + 1; test that
    // in exact arithmetic rather than trusting log(1) to round to 0.
    const bool median = 2 * rank == static_cast<double>(n_cols + 1);
    r.median_ties += median;
    overfit += median || lambda < 0;
    r.lambdas.push_back(median ? 0.0 : lambda);
    ++r.selected[best];
    ++r.combinations;
  }
  r.pbo = static_cast<double>(overfit) / static_cast<double>(r.combinations);
  return r;
}

}  // namespace flashtick
