// PlanArm (see arm_plan.h).
#include "research/sweep/arm_plan.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ticks/features.h"
#include "research/split/normalizer.h"

namespace flashtick {

absl::StatusOr<ArmPlan> PlanArm(const SweepConfig& c, const std::vector<int64_t>& day_steps,
                                int64_t context) {
  ArmPlan plan;
  plan.context = context;
  plan.batch = c.BatchFor(context);
  plan.eval_stride = c.EvalStrideFor(context);
  ASSIGN_OR_RETURN(std::vector<Fold> folds, MakeSplits(c.SplitFor(context), day_steps));
  if (folds.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "walk-forward: no fold for N=", context, " over ", day_steps.size(),
        " days (train_days ", c.walk_forward.train_days, ", test_days ",
        c.walk_forward.test_days, ")"));
  }
  const double tokens_per_step = static_cast<double>(plan.batch * context);
  int64_t prev_samples = 0;
  for (size_t i = 0; i < folds.size(); ++i) {
    FoldPlan f;
    f.fold = std::move(folds[i]);
    const int64_t samples = f.fold.train_samples();
    if (samples == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "walk-forward: fold ", i, " (test day ", f.fold.test_days.front(), ") of N=", context,
          " has no training sample left after the purge; use more train_days"));
    }
    // Without warm start every fold trains from scratch over all its samples.
    const bool fresh = i == 0 || !c.warm_start;
    f.new_samples = fresh ? samples : std::max<int64_t>(0, samples - prev_samples);
    const double epochs = fresh ? c.training.first_fold_epochs : c.training.epochs_per_fold;
    int64_t steps = static_cast<int64_t>(std::ceil(epochs * f.new_samples / tokens_per_step));
    steps = std::max(steps, c.training.min_steps_per_fold);
    if (c.training.max_steps_per_fold > 0) steps = std::min(steps, c.training.max_steps_per_fold);
    f.steps = steps;
    f.first_step = plan.total_steps;
    plan.total_steps += steps;
    prev_samples = samples;
    for (int d : f.fold.test_days) plan.test_days.push_back(d);
    plan.folds.push_back(std::move(f));
  }
  return plan;
}

absl::StatusOr<std::vector<float>> ArmFeatures(const ResearchDataset& dataset,
                                               const ArmPlan& plan) {
  ASSIGN_OR_RETURN(FeatureNormalizer norm,
                   FeatureNormalizer::FitPast(dataset.context(), plan.folds.front().fold));
  std::vector<float> features = dataset.context().features();
  norm.Apply(features.data(), static_cast<int64_t>(features.size()) / kNumFeatures);
  return features;
}

}  // namespace flashtick
