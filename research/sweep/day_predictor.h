// DayPredictor: out-of-sample probabilities for a test day from a context-N model.
// A model with context N must see at most N steps, and every scored step should see
// close to N, so the day is covered by windows of N steps that advance by a stride
// s; a window scores only its last s positions, each of which then sees between
// N − s + 1 and N steps (contexts reach back across the night into earlier sessions,
// which are past days). Only windows that hold a labelled step run. The same
// windows serve the precision check, which runs them on two models.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "model/transformer.h"

namespace flashtick {

struct EvalWindow {
  int64_t end = 0;     // global step of the window's last row
  int64_t scored = 0;  // positions scored: the last `scored` rows
};

// Windows covering the labelled steps (labels[t] ≥ 0) of a day at `day_offset`.
std::vector<EvalWindow> PlanDayWindows(int64_t day_offset, const std::vector<int8_t>& labels,
                                       int64_t context, int64_t stride);

// Runs `windows` on `model`, `batch` windows per call; returns [W, N, 3]
// probabilities. features: normalised [total_steps, F] of the whole grid. `stop` (may
// be empty) is asked between layers (Transformer::Predict); true ends it with CANCELLED.
absl::StatusOr<std::vector<float>> RunWindows(Transformer* model, const std::vector<float>& features,
                                              const std::vector<EvalWindow>& windows,
                                              int64_t context, int64_t batch,
                                              const std::function<bool()>& stop = {});

// The day's [steps, 3] probabilities: scored steps from the windows, ⅓ elsewhere
// (unlabelled steps are ignored by the scorer).
absl::StatusOr<std::vector<double>> PredictDay(Transformer* model,
                                               const std::vector<float>& features,
                                               int64_t day_offset,
                                               const std::vector<int8_t>& labels,
                                               int64_t context, int64_t stride, int64_t batch);

}  // namespace flashtick
