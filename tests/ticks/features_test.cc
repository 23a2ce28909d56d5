// Tests for research/features: each feature column against its formula in
// ticks/features.h, causality, robustness to bad mids, and the determinism and
// shape of SimpleSyntheticDay.
#include "ticks/features.h"

#include <gtest/gtest.h>

#include <cmath>

namespace flashtick {
namespace {

SessionGrid SmallGrid() {
  SessionGrid g;
  g.bid = {99.99, 100.00, 99.98, 100.05};
  g.ask = {100.01, 100.02, 100.00, 100.07};
  g.flow = {0.0, 12.0, -3.0, 0.0};
  return g;
}

TEST(FeaturesTest, ColumnsMatchTheirFormulas) {
  const SessionGrid g = SmallGrid();
  const std::vector<float> f = ComputeFeatures(g);
  ASSERT_EQ(f.size(), 4u * kNumFeatures);
  for (int t = 0; t < 4; ++t) {
    const float* row = &f[t * kNumFeatures];
    const double mid = 0.5 * (g.bid[t] + g.ask[t]);
    const double want_ret = t == 0 ? 0.0 : std::log(mid / g.mid(t - 1)) * 1e4;
    EXPECT_NEAR(row[0], want_ret, 1e-4) << "t=" << t;
    EXPECT_NEAR(row[1], (g.ask[t] - g.bid[t]) / mid * 1e4, 1e-4) << "t=" << t;
    const double flow = g.flow[t];
    EXPECT_NEAR(row[2], (flow > 0 ? 1 : flow < 0 ? -1 : 0) * std::log1p(std::fabs(flow)), 1e-6);
    const double phase = 2 * M_PI * t / 23400.0;
    EXPECT_NEAR(row[3], std::sin(phase), 1e-7);
    EXPECT_NEAR(row[4], std::cos(phase), 1e-7);
    EXPECT_EQ(row[5], t == 0 ? 1.0f : 0.0f);
  }
  // Spot values: spread at t=0 is 0.02/100 = 2 bp; signed volume at t=2 is −log(4).
  EXPECT_NEAR(f[0 * kNumFeatures + 1], 2.0, 1e-4);
  EXPECT_NEAR(f[2 * kNumFeatures + 2], -std::log(4.0), 1e-6);
}

TEST(FeaturesTest, CausalAFutureChangeLeavesThePastUntouched) {
  SessionGrid g = SmallGrid();
  const std::vector<float> before = ComputeFeatures(g);
  g.bid[3] = 50.0;
  g.ask[3] = 51.0;
  g.flow[3] = 1e6;
  const std::vector<float> after = ComputeFeatures(g);
  for (int i = 0; i < 3 * kNumFeatures; ++i) EXPECT_EQ(before[i], after[i]) << i;
  EXPECT_NE(before[3 * kNumFeatures], after[3 * kNumFeatures]);
}

TEST(FeaturesTest, BadMidsAndShortColumnsGiveFiniteFeatures) {
  SessionGrid g;
  g.bid = {100.0, 0.0, -1.0, NAN, 100.0, 100.0};
  g.ask = {100.1, 0.0, -0.5, 100.0, 100.1};  // one short: the last step has no ask
  g.flow = {1.0, INFINITY};                  // short, and one infinite
  const std::vector<float> f = ComputeFeatures(g);
  ASSERT_EQ(f.size(), 6u * kNumFeatures);
  for (float v : f) EXPECT_TRUE(std::isfinite(v));
  EXPECT_EQ(f[5 * kNumFeatures + 1], 0.0f);  // missing ask: zero spread
}

TEST(FeaturesTest, EmptyGridGivesNoRows) { EXPECT_TRUE(ComputeFeatures(SessionGrid{}).empty()); }

TEST(SimpleSyntheticDayTest, DeterministicFromTheSeed) {
  const SessionGrid a = SimpleSyntheticDay(7, 2000);
  const SessionGrid b = SimpleSyntheticDay(7, 2000);
  const SessionGrid c = SimpleSyntheticDay(8, 2000);
  EXPECT_EQ(a.bid, b.bid);
  EXPECT_EQ(a.ask, b.ask);
  EXPECT_EQ(a.flow, b.flow);
  EXPECT_NE(a.bid, c.bid);
}

TEST(SimpleSyntheticDayTest, AFullSessionLooksLikeAMarket) {
  const SessionGrid d = SimpleSyntheticDay(42);
  ASSERT_EQ(d.steps(), kSessionSeconds);
  EXPECT_EQ(d.instrument, "SYNTH");
  EXPECT_EQ(d.date, "2026-01-02");
  int buys = 0, sells = 0;
  double min_spread = 1e9, max_spread = 0, sum_sq = 0;
  for (int64_t t = 0; t < d.steps(); ++t) {
    ASSERT_LT(d.bid[t], d.ask[t]) << "crossed at " << t;
    const double s = (d.ask[t] - d.bid[t]) / d.mid(t) * 1e4;
    min_spread = std::min(min_spread, s);
    max_spread = std::max(max_spread, s);
    buys += d.flow[t] > 0;
    sells += d.flow[t] < 0;
    if (t > 0) sum_sq += std::pow(std::log(d.mid(t) / d.mid(t - 1)) * 1e4, 2);
  }
  EXPECT_GT(max_spread - min_spread, 0.5) << "spread should vary over the day";
  EXPECT_GT(buys, 5000);
  EXPECT_GT(sells, 5000);
  // Per-step volatility is 0.5 bp: the realised value over 23,399 steps is within 2%.
  EXPECT_NEAR(std::sqrt(sum_sq / (d.steps() - 1)), 0.5, 0.01);
  for (float v : ComputeFeatures(d)) ASSERT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace flashtick
