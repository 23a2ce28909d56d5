// EvaluateFold: the out-of-sample half of one walk-forward fold. Loads the model the
// fold trained (exported to model_dir), predicts each test day with windows of N
// (day_predictor.h), scores the day (research_dataset.h ScoreTestDay: metrics and
// the strategy's daily return net of cost) and, on planted data, tallies whether the
// predicted class at each event's call step equals its label, per lag family.
// Appends to result->days and result->events, and records the kernel path that ran.
// For the first kAttentionEvents events of each family whose cue lies inside the
// arm's window it also records where the call step's attention goes: the weight on
// the cue and on the call step itself, per layer and head (EventTally; the report's
// "where the call step looks"): whether a family is missed for not finding the cue
// or for not reading its sign.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "research/split/research_dataset.h"
#include "research/sweep/arm_plan.h"
#include "research/sweep/arm_result.h"
#include "research/sweep/sweep_data.h"

namespace flashtick {

inline constexpr int64_t kAttentionEvents = 8;

absl::Status EvaluateFold(const ResearchDataset& dataset, const SweepData& data,
                          const ArmPlan& plan, int fold_index, const FoldLabels& labels,
                          const std::vector<float>& features, const std::string& model_dir,
                          Backend* backend, double cost_bps, ArmResult* result);

}  // namespace flashtick
