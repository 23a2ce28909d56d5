// Attention rollout: how much of one query step's output traces back to each earlier
// step through every layer (Abnar and Zuidema 2020, "Quantifying Attention Flow in
// Transformers"). A layer's output at step i is its residual input plus attention over
// the steps before it, so rollout models layer l as the row-stochastic
//   Â_l = ½·A_l + ½·I,   A_l = the query heads' mean attention,
// and the query's flow onto the inputs is e_qᵀ·Â_{L−1}·…·Â_0. Where the one-layer
// diagnostic (the call step's own attention on the cue) sees nothing because the sign
// reaches the call step through an intermediate step (a deep model, docs/sweeps/keyed.md,
// seventh session), rollout still credits the cue.
// Computed sparsely from the query down: only the rows of steps that carry flow are
// read, and each layer keeps the `keep` steps with the most flow (at least `floor`
// each), so the result is a lower bound on every step's exact rollout, exact when
// nothing is pruned. Attention at the call steps is all but one-hot, so a few steps a
// layer carry almost all of it.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

// The head-mean attention rows of layer `layer` for query steps `steps` (each row T
// long, summing to 1, 0 past its step; in a layer that excludes the step itself, 0 at
// the step too and summing to 1 less the zero sink's weight, flow that reaches no step).
using AttentionRowsFn = std::function<absl::StatusOr<std::vector<std::vector<double>>>(
    int layer, const std::vector<int64_t>& steps)>;

struct RolloutOptions {
  int keep = 16;         // steps carried into the next layer down
  double floor = 1e-4;   // flow below this is dropped
};

// Rollout of step `query` over `layers` layers of a sequence of T steps: (step, flow)
// pairs, flow > 0, by step. INVALID_ARGUMENT for a query outside [0, T) or rows of the
// wrong length; the rows function's errors pass through.
absl::StatusOr<std::vector<std::pair<int64_t, double>>> AttentionRollout(
    int layers, int64_t T, int64_t query, const AttentionRowsFn& rows,
    const RolloutOptions& options = {});

}  // namespace flashtick
