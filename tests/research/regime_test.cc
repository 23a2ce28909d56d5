// Tests for the regime-switching generator and its exact forward filter: the
// filter against brute-force enumeration of all state paths, flip rate, and the
// accuracy ceiling growing with the context N.
#include "research/synthetic/regime.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/rng.h"

namespace flashtick {
namespace {

// P(s_t = +1 | r_0..r_t) by summing over all 2^(t+1) state paths.
double BruteForcePosterior(const std::vector<double>& r, const RegimeConfig& c) {
  const int n = static_cast<int>(r.size());
  const double mu = c.mu_over_sigma * c.sigma_bps, s2 = c.sigma_bps * c.sigma_bps;
  double up = 0, all = 0;
  for (int mask = 0; mask < (1 << n); ++mask) {
    double w = 0.5;
    for (int i = 0; i < n; ++i) {
      const int s = (mask >> i) & 1 ? 1 : -1;
      if (i > 0) {
        const int prev = (mask >> (i - 1)) & 1 ? 1 : -1;
        w *= s == prev ? 1 - c.flip_prob : c.flip_prob;
      }
      w *= std::exp(-(r[i] - mu * s) * (r[i] - mu * s) / (2 * s2));
    }
    all += w;
    if ((mask >> (n - 1)) & 1) up += w;
  }
  return up / all;
}

TEST(RegimeTest, ForwardFilterIsTheExactPosterior) {
  RegimeConfig c;
  c.flip_prob = 0.1;  // strong switching and signal so the posterior is far from ½
  c.mu_over_sigma = 0.8;
  Rng rng(3);
  std::vector<double> r(12);
  for (double& x : r) x = rng.Normal() + 0.5;
  for (int n = 1; n <= 12; ++n) {
    std::vector<double> window(r.end() - n, r.end());
    EXPECT_NEAR(RegimePosterior(r, 11, n, c), BruteForcePosterior(window, c), 1e-12) << n;
  }
  // A window longer than the series is clipped at its start.
  EXPECT_NEAR(RegimePosterior(r, 3, 100, c),
              BruteForcePosterior(std::vector<double>(r.begin(), r.begin() + 4), c), 1e-12);
}

TEST(RegimeTest, GeneratorMatchesItsParameters) {
  RegimeConfig c;
  c.num_days = 40;
  c.seed = 9;
  auto d = GenerateRegimeDays(c);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->days.size(), 40u);
  const int64_t n = static_cast<int64_t>(d->state.size());
  int64_t flips = 0;
  double sum_dev = 0;
  for (int64_t t = 0; t < n; ++t) {
    if (t > 0) flips += d->state[t] != d->state[t - 1];
    sum_dev += d->return_bps[t] * d->state[t];  // E = μ
  }
  // 936,000 steps × 1/4000 = 234 flips (Poisson sd 15).
  EXPECT_NEAR(flips, n / 4000.0, 4 * std::sqrt(n / 4000.0));
  EXPECT_NEAR(sum_dev / n, 0.02, 4.0 / std::sqrt(static_cast<double>(n)));
  // The price follows the returns.
  const SessionGrid& g = d->days[1];
  EXPECT_NEAR(std::log(g.mid(5) / g.mid(4)) * 1e4, d->return_bps[c.steps_per_day + 5], 1e-6);
  c.flip_prob = 0;
  EXPECT_FALSE(GenerateRegimeDays(c).ok());
}

TEST(RegimeTest, CeilingGrowsWithContext) {
  RegimeConfig c;
  c.num_days = 12;
  c.seed = 21;
  auto d = GenerateRegimeDays(c);
  ASSERT_TRUE(d.ok());
  std::vector<FilterCeiling> out;
  for (int64_t n : {16, 512, 4096, 32768}) {
    out.push_back(RegimeFilterCeiling(*d, c, n, /*first=*/32768, /*stride=*/211));
    std::cout << "regime ceiling N=" << n << ": accuracy " << out.back().accuracy << ", expected "
              << out.back().expected << " over " << out.back().evaluated << " steps\n";
  }
  EXPECT_LT(out[0].accuracy, 0.56);  // 16 returns carry almost nothing (μ/σ = 0.02)
  EXPECT_LT(out[0].expected, out[1].expected);
  EXPECT_LT(out[1].expected, out[2].expected);
  EXPECT_GT(out[2].accuracy, 0.6);
  // The filter is calibrated: its hit rate matches its own expectation.
  for (const FilterCeiling& f : out) EXPECT_NEAR(f.accuracy, f.expected, 0.04) << f.context;
}

}  // namespace
}  // namespace flashtick
