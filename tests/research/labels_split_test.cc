// Tests for DeepLOB labels (formula, nothing across the close, balanced α),
// purged walk-forward splits (a property test over random configurations: no
// training span overlaps a test span, and nothing is purged needlessly), and
// past-only normalisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "research/data/day_context.h"
#include "research/labels/deeplob.h"
#include "common/rng.h"
#include "research/split/normalizer.h"
#include "research/split/walk_forward.h"

namespace flashtick {
namespace {

TEST(LabelsTest, FormulaAndRange) {
  Rng rng(1);
  std::vector<double> p(50);
  double x = 100;
  for (double& v : p) v = (x += rng.Normal() * 0.05);
  const int64_t k = 4;
  auto l = LabelReturns(p, k);
  ASSERT_TRUE(l.ok());
  const LabelRange r = LabelledSteps(50, k);
  EXPECT_EQ(r.begin, 3);
  EXPECT_EQ(r.end, 46);  // t = 45 is the last: t + k = 49 = T − 1
  for (int64_t t = 0; t < 50; ++t) {
    if (t < r.begin || t >= r.end) {
      EXPECT_TRUE(std::isnan((*l)[t])) << t;
      continue;
    }
    double mm = 0, mp = 0;
    for (int i = 0; i < k; ++i) mm += p[t - i] / k;
    for (int i = 1; i <= k; ++i) mp += p[t + i] / k;
    EXPECT_NEAR((*l)[t], (mp - mm) / mm, 1e-14) << t;
  }
  EXPECT_EQ(LabelledSteps(7, 4).end - LabelledSteps(7, 4).begin, 0);
  EXPECT_FALSE(LabelReturns(p, 0).ok());
}

TEST(LabelsTest, NothingIsLabelledAcrossTheClose) {
  // A jump after the close of day 0 must not reach day 0's labels: labels are per session.
  std::vector<double> day0(30, 100.0), day1(30, 200.0);
  auto l0 = LabelReturns(day0, 5);
  ASSERT_TRUE(l0.ok());
  for (double v : *l0) EXPECT_TRUE(std::isnan(v) || v == 0.0);
}

TEST(LabelsTest, BalancedAlphaAndClasses) {
  Rng rng(2);
  std::vector<double> train(3000);
  for (double& v : train) v = rng.Normal();
  train.push_back(NAN);
  auto alpha = ChooseBalancedAlpha(train);
  ASSERT_TRUE(alpha.ok());
  const std::vector<int8_t> c = ClassesFromReturns(train, *alpha);
  int counts[3] = {0, 0, 0};
  for (int8_t v : c) {
    if (v != kNoLabel) ++counts[v];
  }
  EXPECT_EQ(c.back(), kNoLabel);
  EXPECT_EQ(counts[kFlat], 1000);  // exactly ⌈n/3⌉ values with |l| ≤ α (distinct values)
  EXPECT_NEAR(counts[kUp], 1000, 100);
  EXPECT_NEAR(counts[kDown], 1000, 100);
  EXPECT_EQ(ClassesFromReturns({0.5, -0.5, 0.1}, 0.1), (std::vector<int8_t>{kUp, kDown, kFlat}));
  EXPECT_FALSE(ChooseBalancedAlpha({NAN}).ok());
}

struct Sample {
  int day;
  int64_t g;  // global step
};
std::vector<Sample> Expand(const std::vector<SampleRange>& rs, const std::vector<int64_t>& off) {
  std::vector<Sample> out;
  for (const SampleRange& r : rs) {
    for (int64_t t = r.begin; t < r.end; ++t) out.push_back({r.day, off[r.day] + t});
  }
  return out;
}

TEST(WalkForwardTest, PropertyNoTrainingSpanOverlapsATestSpan) {
  Rng rng(2026);
  int checked_folds = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SplitConfig cfg;
    cfg.mode = static_cast<SplitMode>(rng.Below(3));
    cfg.horizon = 1 + static_cast<int64_t>(rng.Below(20));
    cfg.context = 1 + static_cast<int64_t>(rng.Below(400));
    cfg.train_days = 1 + static_cast<int>(rng.Below(3));
    cfg.test_days = 1 + static_cast<int>(rng.Below(2));
    cfg.embargo_days = 1 + static_cast<int>(rng.Below(2));
    const int days = cfg.train_days + cfg.test_days + 1 + static_cast<int>(rng.Below(6));
    std::vector<int64_t> steps(days);
    for (int64_t& s : steps) s = 10 + static_cast<int64_t>(rng.Below(150));
    std::vector<int64_t> off(days + 1, 0);
    for (int d = 0; d < days; ++d) off[d + 1] = off[d] + steps[d];
    auto folds = MakeSplits(cfg, steps);
    ASSERT_TRUE(folds.ok()) << folds.status() << " trial " << trial;
    const std::string what = "trial " + std::to_string(trial) + " mode " + SplitModeName(cfg.mode) +
                             " N=" + std::to_string(cfg.context) +
                             " k=" + std::to_string(cfg.horizon);
    for (const Fold& f : *folds) {
      ++checked_folds;
      const std::vector<Sample> train = Expand(f.train, off), test = Expand(f.test, off);
      std::vector<char> is_train(off[days], 0);
      for (const Sample& s : train) is_train[s.g] = 1;
      // 1. No overlap of [g−N+1, g+k] spans (brute force).
      for (const Sample& a : train) {
        for (const Sample& b : test) {
          ASSERT_TRUE(a.g + cfg.horizon < b.g - cfg.context + 1 ||
                      b.g + cfg.horizon < a.g - cfg.context + 1)
              << what << ": train " << a.g << " overlaps test " << b.g;
        }
      }
      // 2. Test samples are exactly the labelled steps of the test days.
      int64_t want_test = 0;
      for (int d : f.test_days) {
        const LabelRange r = LabelledSteps(steps[d], cfg.horizon);
        want_test += std::max<int64_t>(r.end - r.begin, 0);
      }
      EXPECT_EQ(f.test_samples(), want_test) << what;
      // 3. Which days may train.
      const int first = f.test_days.front(), last = f.test_days.back();
      for (const Sample& s : train) {
        ASSERT_FALSE(s.day >= first && s.day <= last) << what;
        if (cfg.mode != SplitMode::kPurgedKFold) {
          ASSERT_LT(s.day, first) << what;
        }
        if (cfg.mode == SplitMode::kRolling) {
          ASSERT_GE(s.day, first - cfg.train_days) << what;
        }
        if (s.day > last) {
          ASSERT_GT(s.day, last + cfg.embargo_days) << what;  // embargo
        }
      }
      // 4. Minimal purge: an eligible labelled sample left out must overlap a test span.
      for (int d = 0; d < days; ++d) {
        const bool eligible =
            (d < first && (cfg.mode != SplitMode::kRolling || d >= first - cfg.train_days)) ||
            (cfg.mode == SplitMode::kPurgedKFold && d > last + cfg.embargo_days);
        if (!eligible) continue;
        const LabelRange r = LabelledSteps(steps[d], cfg.horizon);
        for (int64_t t = r.begin; t < r.end; ++t) {
          const int64_t g = off[d] + t;
          if (is_train[g]) continue;
          bool overlaps = false;
          for (const Sample& b : test) {
            overlaps |= std::llabs(g - b.g) <= cfg.context + cfg.horizon - 1;
          }
          ASSERT_TRUE(overlaps) << what << ": sample " << g << " purged needlessly";
        }
      }
      EXPECT_EQ(f.train_samples(), static_cast<int64_t>(train.size()));
    }
  }
  std::cout << "walk-forward property: " << checked_folds << " folds checked\n";
  EXPECT_GT(checked_folds, 500);
}

TEST(WalkForwardTest, ExpandingFoldsAndPurgeZone) {
  SplitConfig cfg;
  cfg.context = 150;
  cfg.horizon = 10;
  cfg.train_days = 2;
  auto folds = MakeSplits(cfg, {100, 100, 100, 100});
  ASSERT_TRUE(folds.ok());
  ASSERT_EQ(folds->size(), 2u);  // test days 2 and 3
  const Fold& f = (*folds)[0];
  EXPECT_EQ(f.test_days, std::vector<int>{2});
  // First test sample g = 200 + 9; purge zone starts at g − (N + k − 1) = 50.
  // Day 0 labelled steps 9..89 survive up to step 49 (global 49): 41 samples.
  EXPECT_EQ(f.train_samples(), 41);
  EXPECT_EQ(f.purged, 81 + 81 - 41);
  EXPECT_EQ(f.train_days, std::vector<int>{0});
  EXPECT_EQ((*folds)[1].test_days, std::vector<int>{3});
  cfg.mode = SplitMode::kPurgedKFold;
  cfg.embargo_days = 0;
  EXPECT_FALSE(MakeSplits(cfg, {100, 100}).ok());
  cfg.mode = SplitMode::kExpanding;
  cfg.train_days = 4;
  EXPECT_FALSE(MakeSplits(cfg, {100, 100, 100, 100}).ok());
}

TEST(NormalizerTest, PastDaysOnly) {
  std::vector<SessionGrid> days;
  for (int d = 0; d < 4; ++d) {
    days.push_back(SimpleSyntheticDay(d + 1, 500, "S", "2026-01-0" + std::to_string(5 + d)));
  }
  auto ctx = DayContext::Build(days);
  ASSERT_TRUE(ctx.ok());
  SplitConfig cfg;
  cfg.mode = SplitMode::kPurgedKFold;
  cfg.context = 20;
  cfg.horizon = 5;
  auto folds = MakeSplits(cfg, {500, 500, 500, 500});
  ASSERT_TRUE(folds.ok());
  const Fold& f = (*folds)[2];  // test day 2; trains on 0, 1 and (after the embargo) none
  auto z = FeatureNormalizer::FitPast(*ctx, f);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->fitted_days(), (std::vector<int>{0, 1}));
  // Changing the test day and later days leaves the statistics unchanged.
  for (int d = 2; d < 4; ++d) {
    for (double& b : days[d].bid) b *= 1.5;
  }
  auto ctx2 = DayContext::Build(days);
  auto z2 = FeatureNormalizer::FitPast(*ctx2, f);
  ASSERT_TRUE(z2.ok());
  EXPECT_EQ(z->mean(), z2->mean());
  EXPECT_EQ(z->stddev(), z2->stddev());
  // On the fitted days the normalised columns have mean 0 and sd 1.
  std::vector<float> rows(ctx->features().begin(), ctx->features().begin() + 1000 * kNumFeatures);
  z->Apply(rows.data(), 1000);
  for (int j = 0; j < 3; ++j) {
    double m = 0, v = 0;
    for (int i = 0; i < 1000; ++i) m += rows[i * kNumFeatures + j] / 1000.0;
    for (int i = 0; i < 1000; ++i) v += std::pow(rows[i * kNumFeatures + j] - m, 2) / 999.0;
    EXPECT_NEAR(m, 0.0, 1e-5) << j;
    EXPECT_NEAR(v, 1.0, 1e-4) << j;
  }
  EXPECT_EQ(rows[3], ctx->features()[3]);                            // time of day passes through
  EXPECT_FALSE(FeatureNormalizer::FitPast(*ctx, (*folds)[0]).ok());  // no earlier day
}

}  // namespace
}  // namespace flashtick
