// ArmPlan: the schedule of one arm, a pure function of the configuration and the
// day lengths, so a restarted arm recomputes exactly the plan it was running.
//   folds:  purged walk-forward splits for this N (research/split/walk_forward.h);
//           the test days are the same for every N, only the purge differs
//   steps:  fold 0 trains first_fold_epochs over its training samples; fold i > 0
//           continues for epochs_per_fold over the samples new since fold i − 1,
//           steps = ceil(epochs · samples / (B · N)), clamped to [min, max]
//   batch:  B = max(1, tokens_per_step / N) sequences of N steps
// The step → (fold, step within fold) map is what makes resume exact: the trainer's
// step count in a checkpoint says where the arm stands.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "research/split/research_dataset.h"
#include "research/split/walk_forward.h"
#include "research/sweep/sweep_config.h"

namespace flashtick {

struct FoldPlan {
  Fold fold;
  int64_t new_samples = 0;
  int64_t steps = 0;
  int64_t first_step = 0;  // global steps [first_step, first_step + steps) train this fold
};

struct ArmPlan {
  int64_t context = 0, batch = 0, eval_stride = 0;
  std::vector<FoldPlan> folds;
  int64_t total_steps = 0;
  std::vector<int> test_days;  // every fold's test days, in order
};

absl::StatusOr<ArmPlan> PlanArm(const SweepConfig& config, const std::vector<int64_t>& day_steps,
                                int64_t context);

// The features the arm's model sees: the whole grid [total_steps, F], normalised
// with statistics of the first fold's training days (past days for every test day).
absl::StatusOr<std::vector<float>> ArmFeatures(const ResearchDataset& dataset,
                                               const ArmPlan& plan);

}  // namespace flashtick
