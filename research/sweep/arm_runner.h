// ArmRunner: trains and tests one arm (one N, one seed) walk-forward, resumably.
// Per fold: α and labels from the fold's training samples (research_dataset.h),
// training steps on windows of N (window_sampler.h) through the Trainer, then the
// fold's test days predicted (day_predictor.h) and scored: metrics, the strategy's
// daily return net of cost, and for planted data the hits at each event's call
// step. Features are normalised with statistics of the first fold's training days,
// which precede every test day (past-only).
// On disk, under `dir` (arms/<arm_id>/):
//   state.json      the ArmResult so far (atomic write), after every checkpoint and
//                   every evaluated fold; with it the count and seconds of the plain
//                   and the Hessian-refresh steps so far, over every fold
//   ckpt-f<k>/      TrainCheckpoint of the trainer created at fold k (k = 0 with
//                   warm start), every checkpoint_every_steps steps and at fold ends,
//                   with the ArmResult of that save attached (written before
//                   state.json, atomically with the weights)
//   model/          the exported model of the last trained fold
// A restarted arm loads both and continues at the checkpoint's step, with the arm
// state of the newer of the two (docs/research/sweeps.md, "Resume"); the batch of
// every step is a pure function of the plan, so the resumed arm trains exactly as
// the uninterrupted one would have. Cancel is checked between steps: the arm saves
// a checkpoint and stops with state "cancelled".
// Over a process group (ArmInputs::group, world W > 1; docs/multi_gpu.md, "One sweep
// arm over processes") every rank runs this same loop with one replica
// (ProcessGroupTrainer), so every decision must come out the same on every rank:
// those from local inputs (the cancel flag, the time budget) are agreed through
// ProcessGroup::AnyTrue each step; the rest read state the ranks share (the
// all-reduced losses, the identical replicas' validation losses). Only rank 0 writes
// (state.json, checkpoints, the model) and reports progress; the others score the
// test days from a private copy of the model and return the same result.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "research/parallel/process_group.h"
#include "research/split/research_dataset.h"
#include "research/sweep/arm_plan.h"
#include "research/sweep/arm_result.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_data.h"

namespace flashtick {

struct ArmProgress {
  int arm_index = 0;
  std::string arm_id;
  int64_t context = 0;
  uint64_t seed = 0;
  std::string phase;  // "train", "test", "done"
  int fold = 0, folds = 0;
  double epoch = 0;   // tokens so far / training samples of the last fold
  int64_t step = 0, total_steps = 0;
  double loss = 0, step_seconds = 0, tokens_per_second = 0;
  int64_t peak_memory_bytes = 0;
  bool hessian_refreshed = false;  // the step refreshed Sophia-H's Hessian (an HVP step)
};

struct ArmHooks {
  std::function<void(const ArmProgress&)> on_progress;  // may be empty
  // Polled before every training step; true stops the arm at a checkpoint. May be empty.
  std::function<bool()> stop_requested;
};

struct ArmInputs {
  const SweepConfig* config = nullptr;
  const ResearchDataset* dataset = nullptr;
  const SweepData* data = nullptr;
  const ArmPlan* plan = nullptr;
  int arm_index = 0;
  std::string arm_id;
  uint64_t seed = 0;
  std::string dir;
  Backend* backend = nullptr;
  // Data parallelism (config replicas_per_arm > 1): every replica's backend, the first
  // being `backend`, and on CUDA their GPUs. Empty: one device.
  std::vector<Backend*> replicas;
  std::vector<int> gpus;
  // Data parallelism over processes: this process's rank of `group` (rendezvoused,
  // outliving the run) trains one replica on `backend` (on CUDA on GPU gpus[0], or the
  // group's local rank when `gpus` is empty); every rank calls Run with the same
  // inputs and the same shared `dir`. Null, or a world of one: this process alone.
  // Not together with `replicas`.
  ProcessGroup* group = nullptr;
};

class ArmRunner {
 public:
  // The result has state kDone, or kCancelled when the cancel flag stopped it.
  static absl::StatusOr<ArmResult> Run(const ArmInputs& in, const ArmHooks& hooks);
  // The persisted result of an arm directory, NotFound when it has none.
  static absl::StatusOr<ArmResult> LoadState(const std::string& dir);
};

}  // namespace flashtick
