// Promotion of a sweep arm to a served model (flashtick.v1.Experiments/PromoteArm):
// the arm's final trainer checkpoint (research/sweep/arm_runner.h: arms/<arm_id>/
// ckpt-f<k>, k the last fold's trainer, 0 with warm start) loaded through
// TrainCheckpoint::Load and exported with Trainer::ExportModel, the same
// config.json + model.safetensors the sweep itself evaluates and the model
// repository loads. The model keeps the configuration it trained with, so its
// max_context is the sweep's longest N (SweepConfig::ModelFor), which is at least
// the arm's own N: positions are rotary, so no weight depends on it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flashtick/v1/experiments.pb.h"

namespace flashtick {

// The checkpoint directory holding the arm's final weights: the ckpt-f<k> with the
// highest k that has a manifest. NOT_FOUND when there is none.
absl::StatusOr<std::string> FinalArmCheckpoint(const std::string& arm_dir);

// Writes config.json and model.safetensors of the arm in `arm_dir` into `out_dir`
// (loaded on a CPU backend: the export is host work).
absl::Status ExportArmModel(const std::string& arm_dir, const std::string& out_dir);

// The arm PromoteArm chooses when none is named: among the arms of the verdict's
// best N (best_context, by the gate's best_by), the median seed by its own daily
// Sharpe (ties by seed; the lower median of an even count, as the gate's median
// seed). With one seed per N, the best N's only arm. FAILED_PRECONDITION when the
// verdict names no single best N (tied at the top, or no verdict).
absl::StatusOr<std::string> WinningArm(const v1::Experiment& experiment,
                                       int64_t best_context);

}  // namespace flashtick
