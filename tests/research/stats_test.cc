// Hand-checked and paper-checked tests for research/stats: E[max of N normals]
// (N = 3: 0.846284), the Bailey & López de Prado (2014) DSR example, PBO on
// small matrices that exercise each tie rule, classification metrics, the
// strategy's daily returns and the gate verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/rng.h"
#include "research/stats/classification.h"
#include "research/stats/gate.h"
#include "research/stats/pbo.h"
#include "research/stats/sharpe.h"
#include "research/stats/strategy.h"

namespace flashtick {
namespace {

TEST(NormalTest, QuantileAndExpectedMax) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(NormalQuantile(1e-10), -6.361340902404056, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-15);
  EXPECT_TRUE(std::isinf(NormalQuantile(1.0)));
  EXPECT_NEAR(*ExpectedMaxOfNormals(3), 0.846284375321634, 1e-9);     // docs/research/protocol.md: 0.846284
  EXPECT_NEAR(*ExpectedMaxOfNormals(2), 1 / std::sqrt(M_PI), 1e-10);  // E[max of 2] = 1/√π
  EXPECT_EQ(*ExpectedMaxOfNormals(1), 0.0);
  EXPECT_FALSE(ExpectedMaxOfNormals(0).ok());
}

TEST(SharpeTest, PaperExample) {
  // Bailey & López de Prado (2014) §3: SR_ann = 2.5 over T = 1,250 days, N = 100
  // trials with V_ann[SR] = 0.5, skew −3, kurtosis 10.
  Moments m;
  m.n = 1250;
  m.sharpe = 2.5 / std::sqrt(250.0);
  m.skew = -3;
  m.kurtosis = 10;
  const double v = 0.5 / 250;
  auto gumbel = DeflatedSharpeRatio(m, 100, v, EmaxMethod::kGumbel);
  ASSERT_TRUE(gumbel.ok()) << gumbel.status();
  EXPECT_NEAR(gumbel->sr0, 0.113172, 5e-7);
  EXPECT_NEAR(gumbel->dsr, 0.900397, 5e-7);
  // With the exact E[max of 100 normals] = 2.507594 (what the gate uses).
  auto exact = DeflatedSharpeRatio(m, 100, v);
  ASSERT_TRUE(exact.ok());
  EXPECT_NEAR(exact->emax, 2.507593636, 1e-8);
  EXPECT_NEAR(exact->sr0, 0.112143, 5e-7);
  EXPECT_NEAR(exact->dsr, 0.905444, 5e-7);
}

TEST(SharpeTest, PsrEdgesAreErrorsNotNumbers) {
  EXPECT_FALSE(ProbabilisticSharpe(0.5, 0, 1, 0, 3).ok());    // T < 2
  EXPECT_FALSE(ProbabilisticSharpe(2.0, 0, 100, 5, 3).ok());  // 1 − γ₃SR + … ≤ 0
  EXPECT_FALSE(ProbabilisticSharpe(std::vector<double>(10, 0.01), 0).ok());  // constant
  EXPECT_NEAR(*ProbabilisticSharpe(0.0, 0.0, 50, 0, 3), 0.5, 1e-15);
}

TEST(PboTest, ConsistentAndInvertedRankings) {
  // Two blocks of two rows (S = 2). A 2-row block [a, b] has SR (a+b)/(√2|b−a|).
  // A = [1,3 | 1,3] beats B = [0,1 | 0,1] in both halves → never overfit.
  auto ok = ProbabilityOfBacktestOverfitting({{1, 0}, {3, 1}, {1, 0}, {3, 1}}, 2);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->combinations, 2);
  EXPECT_EQ(ok->pbo, 0.0);
  EXPECT_EQ(ok->selected, (std::vector<int64_t>{2, 0}));
  // A = [1,3 | −1,−3], B = [−1,−3 | 1,3]: the in-sample winner always loses after.
  auto bad = ProbabilityOfBacktestOverfitting({{1, -1}, {3, -3}, {-1, 1}, {-3, 3}}, 2);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->pbo, 1.0);
  EXPECT_NEAR(bad->lambdas[0], std::log((1.0 / 3) / (2.0 / 3)), 1e-15);
}

TEST(PboTest, TieRuleOneTheMedianRankCountsAsOverfit) {
  // N = 3: A = [1,3 | 0,1] (SR 1.41, 0.71), B = [0,1 | 1,3] (0.71, 1.41),
  // C = [−1,2 | −1,2] (0.24 both). Each half's winner lands on the other half's
  // median: ω̄ = 2/4, λ = 0 → overfit. A strict "λ < 0" would report PBO 0.
  auto r = ProbabilityOfBacktestOverfitting({{1, 0, -1}, {3, 1, 2}, {0, 1, -1}, {1, 3, 2}}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pbo, 1.0);
  EXPECT_EQ(r->median_ties, 2);
  EXPECT_EQ(r->lambdas, (std::vector<double>{0.0, 0.0}));
}

TEST(PboTest, TieRulesTwoAndThreeInSampleLowestIndexOutOfSampleAverageRank) {
  // A and B identical ([1,3 | 0,1]), C = [−1,2 | −1,2]. In sample A and B tie →
  // A (lowest index). Out of sample A ties B above C: ranks 2 and 3 average to
  // 2.5, ω̄ = 2.5/4, λ > 0 → not overfit. (A pessimistic min-rank would give 2,
  // the median, and PBO 1.)
  auto r = ProbabilityOfBacktestOverfitting({{1, 1, -1}, {3, 3, 2}, {0, 0, -1}, {1, 1, 2}}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pbo, 0.0);
  EXPECT_EQ(r->selected, (std::vector<int64_t>{2, 0, 0}));
  EXPECT_NEAR(r->lambdas[0], std::log(0.625 / 0.375), 1e-15);
}

TEST(PboTest, CountsCombinationsAndValidates) {
  Rng rng(4);
  std::vector<std::vector<double>> m(40, std::vector<double>(4));
  for (auto& row : m) {
    for (double& v : row) v = rng.Normal();
  }
  auto r = ProbabilityOfBacktestOverfitting(m);  // S = 16 by default
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->combinations, 12870);                           // C(16, 8)
  EXPECT_FALSE(ProbabilityOfBacktestOverfitting(m, 3).ok());   // odd S
  EXPECT_FALSE(ProbabilityOfBacktestOverfitting(m, 42).ok());  // S > T
  m[3].pop_back();
  EXPECT_FALSE(ProbabilityOfBacktestOverfitting(m, 4).ok());           // ragged
  EXPECT_FALSE(ProbabilityOfBacktestOverfitting({{1}, {2}}, 2).ok());  // one column
}

TEST(ClassificationTest, HandComputedExample) {
  const std::vector<int8_t> y = {kDown, kFlat, kUp, kUp, kFlat, kNoLabel};
  const std::vector<double> p = {0.7, 0.2, 0.1, 0.1, 0.8, 0.1,
                                 0.2, 0.3, 0.5, 0.4, 0.4, 0.2,  // tie down/flat → flat
                                 0.4, 0.2, 0.4,                 // tie down/up → down
                                 0.0, 0.0, 0.0};                // unlabelled: ignored
  auto m = Classify(y, p);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->samples, 5);
  EXPECT_DOUBLE_EQ(m->accuracy, 0.6);
  EXPECT_EQ(m->confusion[kFlat][kDown], 1);
  EXPECT_EQ(m->confusion[kUp][kFlat], 1);
  EXPECT_NEAR(m->f1[kDown], 2.0 / 3, 1e-15);
  EXPECT_NEAR(m->f1[kFlat], 0.5, 1e-15);
  EXPECT_NEAR(m->f1[kUp], 2.0 / 3, 1e-15);
  EXPECT_NEAR(m->macro_f1, (2.0 / 3 + 0.5 + 2.0 / 3) / 3, 1e-15);
  EXPECT_NEAR(m->log_loss, -(std::log(0.7) + std::log(0.8) + std::log(0.5) + 2 * std::log(0.2)) / 5,
              1e-15);
  EXPECT_FALSE(Classify(y, std::vector<double>(5)).ok());
  EXPECT_FALSE(Classify({kUp}, {0.5, 0.6, 0.1}).ok());  // does not sum to 1
}

TEST(StrategyTest, PositionsHorizonAndCost) {
  // Mids rise by 1 a step from 100; k = 2; cost 1 bp per round trip.
  std::vector<double> mids;
  for (int i = 0; i < 8; ++i) mids.push_back(100 + i);
  const std::vector<int8_t> pred = {kNoLabel, kUp, kDown, kDown, kUp, kFlat, kUp, kUp};
  auto d = DailyStrategyReturn(mids, pred, 2, 1.0);
  ASSERT_TRUE(d.ok());
  // t=1 up, held to 3: +2/101; t=3 down, held to 5: −2/103; t=5 flat: wait;
  // t=6: t + k is past the close, so no trade.
  EXPECT_EQ(d->decisions, 3);
  EXPECT_EQ(d->trades, 2);
  EXPECT_NEAR(d->gross, 2.0 / 101 - 2.0 / 103, 1e-15);
  EXPECT_NEAR(d->daily_return, 2.0 / 101 - 2.0 / 103 - 2e-4, 1e-15);
  // Flat waits a single step, so a signal between k-grid points is still traded.
  const std::vector<int8_t> late = {kFlat, kFlat, kUp, kNoLabel, kNoLabel, kDown, kFlat, kFlat};
  auto e = DailyStrategyReturn(mids, late, 2, 0.0);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->decisions, 4);
  EXPECT_EQ(e->trades, 2);
  EXPECT_NEAR(e->daily_return, 2.0 / 102 - 2.0 / 105, 1e-15);
  EXPECT_FALSE(DailyStrategyReturn(mids, pred, 0, 1.0).ok());
}

std::vector<double> Noise(Rng& rng, int n, double mean, double sd) {
  std::vector<double> x(n);
  for (double& v : x) v = mean + sd * rng.Normal();
  return x;
}

// Seeds (gate.h, "like with like"): every (N, seed) run is a trial, the DSR's variance is
// over the runs' own Sharpe ratios, and the longest N is tested seed by seed, the
// median seed deciding.
TEST(GateTest, SeedsAreTrialsAndTheMedianSeedDecides) {
  Rng rng(7);
  const int days = 40;
  auto arm = [&](const char* name, int64_t n, std::vector<double> means) {
    ArmOutcome a{name, n, std::vector<double>(days, 0.0), {}, {}};
    for (double m : means) {
      a.seed_daily_returns.push_back(Noise(rng, days, m, 1e-3));
      for (int t = 0; t < days; ++t) a.daily_returns[t] += a.seed_daily_returns.back()[t] / 3;
    }
    return a;
  };
  // The long arm's seeds: two strong, one at noise.
  std::vector<ArmOutcome> arms = {arm("N=512", 512, {0, 0, 0}), arm("N=4096", 4096, {0, 0, 0}),
                                  arm("N=32768", 32768, {2e-3, 2.2e-3, 0})};
  auto v = EvaluateGate(arms);
  ASSERT_TRUE(v.ok()) << v.status();
  std::cout << v->Summary() << "\n";
  EXPECT_EQ(v->dsr.trials, 9) << "contexts × seeds runs";
  ASSERT_EQ(v->seed_dsr.size(), 3u);
  std::vector<double> each = {v->seed_dsr[0].dsr, v->seed_dsr[1].dsr, v->seed_dsr[2].dsr};
  std::sort(each.begin(), each.end());
  EXPECT_EQ(v->dsr.dsr, each[1]) << "the median seed";
  EXPECT_LT(each[0], 0.5) << "the noise seed alone would fail";
  // The trial set is the nine runs' Sharpe ratios: the same DSR from the helper.
  std::vector<double> trials;
  for (const ArmOutcome& a : arms) {
    for (const auto& r : a.seed_daily_returns) trials.push_back(SharpeRatio(r));
  }
  auto direct = DeflatedSharpeRatio(arms[2].seed_daily_returns[0], trials);
  ASSERT_TRUE(direct.ok());
  EXPECT_DOUBLE_EQ(v->seed_dsr[0].dsr, direct->dsr);
  // Two noise seeds of three: the median seed fails the DSR gate.
  arms[2] = arm("N=32768", 32768, {2e-3, 0, 0});
  auto weak = EvaluateGate(arms);
  ASSERT_TRUE(weak.ok());
  EXPECT_FALSE(weak->dsr_ok) << weak->Summary();
}

TEST(GateTest, PassesOnlyWhenTheLongArmEarnsIt) {
  Rng rng(99);
  const int days = 40;
  std::vector<ArmOutcome> arms = {{"N=512", 512, Noise(rng, days, 0.0, 1e-3), {}, {}},
                                  {"N=4096", 4096, Noise(rng, days, 0.0, 1e-3), {}, {}},
                                  {"N=32768", 32768, Noise(rng, days, 2e-3, 1e-3), {}, {}}};
  auto v = EvaluateGate(arms);
  ASSERT_TRUE(v.ok()) << v.status();
  std::cout << v->Summary() << "\n";
  EXPECT_TRUE(v->passed);
  EXPECT_EQ(v->longest_arm, 2);
  EXPECT_EQ(v->best_arm, 2);
  EXPECT_GT(v->dsr.dsr, 0.99);
  EXPECT_LE(v->pbo.pbo, 0.10);
  EXPECT_EQ(v->dsr.trials, 3);
  // Deflating by 1,000 more configurations with widely spread Sharpe ratios fails it.
  GateConfig many;
  many.other_trial_sharpes = Noise(rng, 1000, 0.0, 1.0);
  auto deflated = EvaluateGate(arms, many);
  ASSERT_TRUE(deflated.ok());
  EXPECT_FALSE(deflated->dsr_ok);
  EXPECT_FALSE(deflated->passed);
  // Null: every arm is noise → fails.
  arms[2].daily_returns = Noise(rng, days, 0.0, 1e-3);
  auto null = EvaluateGate(arms);
  ASSERT_TRUE(null.ok());
  std::cout << null->Summary() << "\n";
  EXPECT_FALSE(null->passed);
  // The long arm worse than a shorter one → fails on "best", whatever else holds.
  arms[0].daily_returns = Noise(rng, days, 3e-3, 1e-3);
  arms[2].daily_returns = Noise(rng, days, 2e-3, 1e-3);
  auto beaten = EvaluateGate(arms);
  ASSERT_TRUE(beaten.ok());
  EXPECT_FALSE(beaten->best_ok);
  EXPECT_EQ(beaten->best_arm, 0);
  EXPECT_FALSE(beaten->passed);
}

TEST(GateTest, FewDaysTiesAndBadInput) {
  std::vector<ArmOutcome> arms = {{"a", 1, {0.01, 0.02, 0.0, 0.01, 0.02, 0.01}, {}, {}},
                                  {"b", 2, {0.01, 0.02, 0.0, 0.01, 0.02, 0.01}, {}, {}}};
  auto v = EvaluateGate(arms);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->best_arm, -1);  // identical arms tie
  EXPECT_FALSE(v->passed);
  EXPECT_EQ(v->pbo.blocks, 6);  // T = 6 < 16: S lowered to 6
  arms[1].context = 1;
  EXPECT_FALSE(EvaluateGate(arms).ok());
  arms[1].context = 2;
  arms[1].daily_returns.pop_back();
  EXPECT_FALSE(EvaluateGate(arms).ok());
  EXPECT_FALSE(EvaluateGate({arms[0]}).ok());
}

}  // namespace
}  // namespace flashtick
