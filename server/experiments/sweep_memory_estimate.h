// SweepMemoryEstimate: an upper-bound guess of the host memory a sweep needs, made
// at submit so that a configuration that cannot fit is refused with
// RESOURCE_EXHAUSTED instead of aborting the process with std::bad_alloc part way
// (and then again on every restart). The figures are deliberately generous: the
// point is to refuse the 100 GB day grid or the 1 GB model, not to plan memory.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "research/sweep/sweep_config.h"

namespace flashtick {

struct SweepMemoryEstimate {
  double data_bytes = 0;         // the days: grid, features, labels
  double model_bytes = 0;        // weights, gradients and optimizer state, all arms
  double activation_bytes = 0;   // one training step's activations, all arms
  double total() const { return data_bytes + model_bytes + activation_bytes; }
};

SweepMemoryEstimate EstimateSweepMemory(const SweepConfig& config);

// Three quarters of physical memory (the default of --experiment-memory-mb).
int64_t DefaultExperimentMemoryBytes();

// RESOURCE_EXHAUSTED naming the estimate's parts and the flag when it passes
// limit_bytes. arms_elsewhere (--sweep-arm-runner=kubernetes): the arms train in pods,
// so this process holds the days and one arm's worth (the precision check's model and
// forward), whatever max_parallel_arms says.
absl::Status CheckSweepMemory(const SweepConfig& config, int64_t limit_bytes,
                              bool arms_elsewhere = false);

}  // namespace flashtick
