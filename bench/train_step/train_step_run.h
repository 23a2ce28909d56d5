// One train_step benchmark measurement: build a Trainer for (model, optimizer, B, N) on
// a backend, run warm-up steps, then time steps (wall clock around TrainStep, which
// ends with a device synchronise), separating Sophia-H's Hessian-refresh steps from
// plain ones. Synthetic ticks and learnable labels come from a seed, so our run and
// the PyTorch twin (torch_train_step.py) can be fed the same data via DumpData.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "trainer/step_profiler.h"
#include "trainer/trainer.h"

namespace flashtick::bench {

struct TrainBatch {
  int64_t B = 0, T = 0;
  std::vector<float> ticks;     // [B, T, F]
  std::vector<int32_t> labels;  // [B, T]; -1 for the first 8 steps of each sequence
};

// Normal ticks; label = sign class of an exponentially weighted sum of feature 0.
TrainBatch SyntheticBatch(int64_t B, int64_t T, int F, uint64_t seed);

struct StepTiming {
  double ms = 0;               // amortised: (refresh + (k − 1)·plain)/k; AdamW: median
  double ms_plain = 0;         // median of steps without a Hessian refresh
  double ms_refresh = 0;       // median of Sophia-H refresh steps (0 for AdamW)
  int64_t peak_bytes = 0;      // backend allocator high-water mark over the timed steps
  int64_t peak_bytes_plain = 0;    // the same over the steps without a Hessian refresh
  int64_t peak_bytes_refresh = 0;  // over Sophia-H's refresh steps (0 if none was timed)
  int64_t model_bytes = 0;     // allocated before the first step (weights, state)
  std::vector<double> losses;  // one per step, warm-up included
  int timed_steps = 0;
  // RunSpec::profile_nodes: where the timed steps' time went (trainer/step_profiler.h),
  // summed over the plain steps and over the refresh steps.
  StepProfile profile_plain, profile_refresh;
};

struct RunSpec {
  ModelConfig model;
  TrainerOptions options;
  int64_t B = 1, N = 512;
  int warmup = 2, steps = 5;
  uint64_t data_seed = 1;
  bool profile_nodes = false;  // per-node timing of the timed steps (adds a mark per node)
};

absl::StatusOr<StepTiming> RunTrainSteps(const RunSpec& spec, Backend* backend);

// Writes <dir>/config.json + model.safetensors (the initial weights of options.seed)
// and <dir>/data.safetensors with `batches` batches "ticks.<i>" / "labels.<i>".
absl::Status DumpData(const RunSpec& spec, int batches, const std::string& dir, Backend* backend);

// FLOPs of one fwd+bwd pass (the work AdamW needs), by the usual convention: 6 per
// parameter per token for the dense layers, plus causal attention (FlashAttention
// count: forward 4·B·H·N²·D/2, backward 2.5× that) in every layer.
double TrainStepFlops(const ModelConfig& c, int64_t B, int64_t N);

}  // namespace flashtick::bench
