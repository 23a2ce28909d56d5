// The research pipeline end to end without the training engine: planted-cue
// days → ResearchDataset → purged expanding walk-forward → per-fold α → a
// context-limited oracle in place of the model → per-day scores → the gate.
// The oracle reads only the last N feature rows (what a context-N model sees)
// and calls an event when the flow motif sits exactly L − 1 steps back, so arm N
// can call the lag families with L ≤ N. On the planted days the longest arm must
// pass the gate; on the null twin (drift sign independent of the cue) every arm
// must fail it. This checks the plumbing and the gate, not a learner.
#include <gtest/gtest.h>

#include <cmath>

#include "research/split/research_dataset.h"
#include "research/stats/gate.h"
#include "research/synthetic/planted_cue.h"

namespace flashtick {
namespace {

constexpr double kOn = 3.5;  // feature 2 of the motif's A = 50: log1p(50) = 3.93

// Probabilities [steps, 3] for one day from a context-n oracle.
std::vector<double> OracleProbs(const ResearchDataset& ds, int day, int64_t n,
                                const std::vector<int64_t>& lags) {
  const DayContext& ctx = ds.context();
  const std::vector<float>& x = ctx.features();
  const int64_t steps = ctx.day_steps(day), off = ctx.day_offset(day);
  std::vector<double> p(steps * kNumClasses);
  auto flow = [&](int64_t g) { return x[g * kNumFeatures + 2]; };
  for (int64_t t = 0; t < steps; ++t) {
    const int64_t g = off + t;
    int call = 0;
    for (int64_t lag : lags) {
      const int64_t c = g - lag + 1;   // where the motif starts if this is a call step
      if (lag > n || c < 0) continue;  // outside the window [g − n + 1, g]
      const bool a = flow(c) > kOn, b = flow(c + 1) > kOn;
      const bool za = std::fabs(flow(c)) < 1e-6, zb = std::fabs(flow(c + 1)) < 1e-6;
      const bool a2 = flow(c + 2) > kOn, b2 = flow(c + 3) > kOn;
      const bool za2 = std::fabs(flow(c + 2)) < 1e-6, zb2 = std::fabs(flow(c + 3)) < 1e-6;
      if (a && zb && a2 && zb2) call = 1;
      if (za && b && za2 && b2) call = -1;
    }
    double* row = &p[t * kNumClasses];
    if (call > 0) {
      row[kDown] = 0.05, row[kFlat] = 0.05, row[kUp] = 0.9;
    } else if (call < 0) {
      row[kDown] = 0.9, row[kFlat] = 0.05, row[kUp] = 0.05;
    } else {
      row[kDown] = 0.3, row[kFlat] = 0.4, row[kUp] = 0.3;
    }
  }
  return p;
}

struct SweepResult {
  GateVerdict verdict;
  std::vector<std::array<double, 3>> event_hits;  // per arm, per lag family
};

SweepResult RunSweep(bool null_twin) {
  PlantedCueConfig cfg;
  cfg.num_days = 24;
  cfg.seed = 7;
  cfg.null_twin = null_twin;
  auto data = GeneratePlantedCue(cfg);
  EXPECT_TRUE(data.ok()) << data.status();
  auto ds = ResearchDataset::Build(data->days, cfg.horizon);
  EXPECT_TRUE(ds.ok()) << ds.status();
  SweepResult out;
  std::vector<ArmOutcome> arms;
  for (int64_t n : {512, 4096, 32768}) {
    SplitConfig split;
    split.context = n;
    split.horizon = cfg.horizon;
    split.train_days = 4;
    auto folds = MakeSplits(split, ds->day_steps());
    EXPECT_TRUE(folds.ok()) << folds.status();
    ArmOutcome arm;
    arm.name = "N=" + std::to_string(n);
    arm.context = n;
    std::array<int64_t, 3> hits{}, events{};
    std::vector<int8_t> all_labels;
    std::vector<double> all_probs;
    for (const Fold& f : *folds) {
      auto labels = ds->LabelFold(f);
      EXPECT_TRUE(labels.ok()) << labels.status();
      const int day = f.test_days.front();
      const std::vector<double> probs = OracleProbs(*ds, day, n, cfg.lags);
      auto score = ds->ScoreTestDay(day, labels->classes[day], probs, /*cost_bps=*/0.5);
      EXPECT_TRUE(score.ok()) << score.status();
      arm.daily_returns.push_back(score->pnl.daily_return);
      all_labels.insert(all_labels.end(), labels->classes[day].begin(), labels->classes[day].end());
      all_probs.insert(all_probs.end(), probs.begin(), probs.end());
      for (const PlantedEvent& e : data->events) {
        if (e.call_step / cfg.steps_per_day != day) continue;
        const int64_t t = e.call_step % cfg.steps_per_day;
        ++events[e.lag_family];
        hits[e.lag_family] += PredictClass(&probs[t * kNumClasses]) == labels->classes[day][t];
      }
    }
    auto m = Classify(all_labels, all_probs);
    EXPECT_TRUE(m.ok());
    arm.metrics = *m;
    std::array<double, 3> rate{};
    for (int i = 0; i < 3; ++i) rate[i] = events[i] ? double(hits[i]) / events[i] : 0;
    out.event_hits.push_back(rate);
    std::cout << (null_twin ? "null " : "planted ") << arm.name << ": event hits (L=300, 3000, "
              << "15000) = " << rate[0] << ", " << rate[1] << ", " << rate[2] << "; accuracy "
              << m->accuracy << "; daily SR " << SharpeRatio(arm.daily_returns) << "\n";
    arms.push_back(std::move(arm));
  }
  auto v = EvaluateGate(arms);
  EXPECT_TRUE(v.ok()) << v.status();
  out.verdict = *v;
  std::cout << (null_twin ? "null: " : "planted: ") << v->Summary() << "\n";
  return out;
}

TEST(PipelineTest, PlantedSignalPassesTheGateForTheLongestArm) {
  const SweepResult r = RunSweep(/*null_twin=*/false);
  // Arm N calls exactly the lag families with L ≤ N.
  const double want[3][3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
  for (int a = 0; a < 3; ++a) {
    for (int f = 0; f < 3; ++f) EXPECT_NEAR(r.event_hits[a][f], want[a][f], 0.05) << a << "," << f;
  }
  EXPECT_TRUE(r.verdict.passed) << r.verdict.Summary();
  EXPECT_EQ(r.verdict.best_arm, 2);
  EXPECT_LT(r.verdict.arm_sharpe[0], r.verdict.arm_sharpe[1]);
  EXPECT_LT(r.verdict.arm_sharpe[1], r.verdict.arm_sharpe[2]);
}

TEST(PipelineTest, NullTwinFailsTheGate) {
  const SweepResult r = RunSweep(/*null_twin=*/true);
  // The motif is still seen, but the drift it announces is a coin flip.
  EXPECT_NEAR(r.event_hits[2][2], 0.5, 0.2);
  EXPECT_FALSE(r.verdict.passed) << r.verdict.Summary();
}

}  // namespace
}  // namespace flashtick
