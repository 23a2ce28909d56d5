// ResearchDataset: the sessions of one experiment with their features, mids and
// DeepLOB label returns, and the per-fold steps a sweep needs (docs/research/protocol.md):
//   ResearchDataset::Build(days, k)            features (DayContext) + l_t per day
//   MakeSplits(cfg{N, k, ...}, ds.day_steps())  purged walk-forward folds
//   ds.LabelFold(fold)                          α from the fold's training samples
//   FeatureNormalizer::FitPast(ds.context(), fold)
//   ... train the arm, predict the test days ...
//   ds.ScoreTestDay(day, labels, probs, cost)   metrics + daily strategy return
//   EvaluateGate(arms)                          the verdict (stats/gate.h)
// Only the model training sits outside research/split and research/stats.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "research/data/day_context.h"
#include "research/labels/deeplob.h"
#include "research/split/walk_forward.h"
#include "research/stats/classification.h"
#include "research/stats/strategy.h"

namespace flashtick {

struct FoldLabels {
  double alpha = 0;
  // [day][step]: classes for the fold's training and test samples, kNoLabel
  // elsewhere (purged, embargoed, unlabelled or outside the fold).
  std::vector<std::vector<int8_t>> classes;
  std::array<int64_t, kNumClasses> train_counts{}, test_counts{};
};

struct TestDayScore {
  int day = 0;
  std::string date;
  ClassificationMetrics metrics;
  DayPnl pnl;
};

class ResearchDataset {
 public:
  // fixed_alpha > 0 labels every fold with that α (in units of l_t, e.g. 2.5e-4 for
  // 2.5 bp) instead of the balanced one: for data whose moves are rare events, where
  // a balanced α would label two thirds of the noise up or down (docs/research/
  // protocol.md, "Labels").
  static absl::StatusOr<ResearchDataset> Build(const std::vector<SessionGrid>& days,
                                               int64_t horizon, double fixed_alpha = 0);

  const DayContext& context() const { return ctx_; }
  int64_t horizon() const { return horizon_; }
  int num_days() const { return ctx_.num_days(); }
  std::vector<int64_t> day_steps() const;
  // The mids of one day.
  std::vector<double> mids(int day) const;

  // Classes for a fold, with α chosen on its training samples only (or the fixed α).
  absl::StatusOr<FoldLabels> LabelFold(const Fold& fold) const;

  // Scores one test day: `labels` is that day's row of FoldLabels::classes and
  // `probs` the model's [steps, 3] probabilities (rows of unlabelled steps are
  // ignored). The strategy trades only on labelled steps.
  absl::StatusOr<TestDayScore> ScoreTestDay(int day, const std::vector<int8_t>& labels,
                                            const std::vector<double>& probs,
                                            double cost_bps) const;

 private:
  DayContext ctx_;
  int64_t horizon_ = 0;
  double fixed_alpha_ = 0;
  std::vector<std::vector<double>> l_;
};

}  // namespace flashtick
