// ArmResult: what one arm of a sweep measured, and the state it persists so an
// interrupted arm resumes (arms/<arm_id>/state.json beside its checkpoint).
//   cost:    training wall-clock, seconds per epoch (epoch = as many labelled tokens
//            as the arm's final training set), tokens per second, peak memory of
//            the backend (device memory on CUDA, tracked host memory on the CPU);
//            the steps split into plain steps and Sophia-H's Hessian-refresh (HVP)
//            steps, every hessian_interval steps: count and seconds of each
//   benefit: out of sample, per test day and pooled: accuracy, macro-F1, log-loss,
//            confusion, the strategy's daily return net of cost; daily Sharpe
//   planted data: accuracy at the call steps of each lag family's events
// Pooled metrics are recomputed from the per-day confusion matrices (exact for
// accuracy and F1) and sample-weighted log-losses, so no per-step data is kept.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "research/stats/classification.h"

namespace flashtick {

enum class ArmState { kPending, kRunning, kDone, kFailed, kCancelled };
const char* ArmStateName(ArmState s);

struct DayResult {
  int day = 0;  // index into the sweep's sessions
  std::string date;
  int fold = 0;
  ClassificationMetrics metrics;
  double daily_return = 0, gross = 0;
  int64_t trades = 0;
};

struct EventTally {  // one lag family
  int64_t lag = 0;
  int64_t events = 0, hits = 0;  // hit: predicted class at the call step = its label
  // Calls: up/down predictions at call steps (a model that cannot see the cue may say
  // flat, a miss that trades nothing); call_hits: those with the label's sign. An arm
  // blind to a family calls its sign at a coin's rate.
  int64_t calls = 0, call_hits = 0;
  // Where the call step's attention goes (fold_evaluator.h): over the first
  // attention_events events of the family whose cue is inside the window, the mean
  // softmax weight of the call step's query on the cue step and on itself (the go
  // marker carries the cue's key), per layer and query head ([layer·H + head]); and
  // the mean attention rollout of the call step onto the cue, through every layer
  // (attention_rollout.h: a lower bound, pruned to the steps that carry most flow).
  int64_t attention_events = 0;
  std::vector<double> cue_weight, self_weight;
  double cue_rollout = 0;
  double rate() const { return events > 0 ? static_cast<double>(hits) / events : 0.0; }
};

struct LossPoint {
  int64_t step = 0;
  double loss = 0;
};

// One start of the first fold under training.stall_restarts (sweep_config.h) that is not
// the arm's current one: set aside after a stall while a later start trains, or dropped
// at the fold's end. Its steps are in the arm's cost already; its trainer lies in
// arms/<arm>/ckpt-f0-start<index>/ until the fold ends (stall_restarts.h).
struct FirstFoldStart {
  int index = 0;        // 0: the arm's own initialisation; k: RestartSeed(seed, k)
  uint64_t seed = 0;    // its initialisation seed
  int64_t steps = 0;    // first-fold steps it trained (its trainer's step)
  std::string ended;    // what ended it ("stalled at step 1990", ...)
  double loss = 0;      // its last training loss
  double best_validation_loss = 0;  // meaningful when validation_curve is non-empty
  int64_t best_validation_step = 0;
  std::vector<LossPoint> loss_curve, validation_curve;
};

struct ArmResult {
  std::string arm_id;  // "n512", or "n512-s2" when a sweep has several seeds
  int64_t context = 0;
  uint64_t seed = 0;
  ArmState state = ArmState::kPending;
  std::string error;
  // Progress (the resume point is the trainer's step in the checkpoint).
  int folds = 0, evaluated_folds = 0;
  int64_t step = 0, total_steps = 0, batch = 0;
  double loss = 0;  // last training loss
  // Cost.
  double train_seconds = 0, eval_seconds = 0;
  int64_t tokens = 0;           // B·N per step, summed
  int64_t train_samples = 0;    // labelled training samples of the last fold
  int64_t peak_memory_bytes = 0;
  int64_t parameters = 0;
  std::string kernel_path;      // the attention path the test-day predictions ran
  // The training steps over every fold, by kind: plain (gradient only) and refresh
  // (Sophia-H's Hessian refresh: the step also runs the Hutchinson HVP; never with
  // AdamW), their count and summed step_seconds. State files written before these
  // existed load with 0 (the report then shows no mean).
  int64_t plain_steps = 0, refresh_steps = 0;
  double plain_step_seconds = 0, refresh_step_seconds = 0;
  std::string backend;
  // Where the arm trained (run_location.h): "pod P on node K" for a Kubernetes arm,
  // "host H" otherwise; "" in states written before it was recorded.
  std::string ran_on;
  // Benefit.
  std::vector<DayResult> days;
  std::vector<EventTally> events;
  std::vector<LossPoint> loss_curve;
  // Early stopping and the time budget (sweep_config.h, training.validation_days,
  // max_train_seconds): the plan's steps a stopped fold left out, why training
  // stopped short ("" when every planned step ran), and the validation loss.
  int64_t skipped_steps = 0;
  std::string stop_reason;
  // training.restarts > 1 or stall_restarts > 0: which start of the first fold was kept,
  // and every start's best validation loss (with stall restarts also what ended each);
  // "" without restarts. With stall restarts, set once the fold's choice is made.
  std::string restart_choice;
  // training.stall_restarts: the fresh starts the first fold has begun after a stall.
  // It never decreases (the kept start may be an earlier one), and a fresh start's step
  // goes back to 0, so the arm's saves are ordered by (stall_restarts_begun, step), not
  // by step alone (arm_runner.cc, CatchUpWithCheckpoint).
  int stall_restarts_begun = 0;
  // The first fold's other starts (FirstFoldStart), in order: while the fold trains, those
  // set aside; after it, those dropped. The loss and validation curves, best validation
  // loss and last loss above are the current (then the kept) start's.
  std::vector<FirstFoldStart> stall_starts;
  std::vector<LossPoint> validation_curve;
  double best_validation_loss = 0;  // meaningful once validation_curve is non-empty
  int64_t best_validation_step = 0;

  double epochs() const;
  double seconds_per_epoch() const;
  double tokens_per_second() const;
  // Mean seconds of a plain / a refresh step (0 when there was none).
  double mean_plain_step_seconds() const;
  double mean_refresh_step_seconds() const;
  std::vector<double> daily_returns() const;
  // Every test day pooled (InvalidArgument before any day is scored).
  absl::StatusOr<ClassificationMetrics> Pooled() const;
  double Sharpe() const;
};

// Pooled metrics from per-day metrics (accuracy and F1 exactly as Classify would
// compute them on the concatenated days; log-loss sample-weighted).
absl::StatusOr<ClassificationMetrics> PoolMetrics(const std::vector<ClassificationMetrics>& days);

nlohmann::json MetricsToJson(const ClassificationMetrics& m);
absl::StatusOr<ClassificationMetrics> MetricsFromJson(const nlohmann::json& j);
nlohmann::json ArmResultToJson(const ArmResult& a);
absl::StatusOr<ArmResult> ArmResultFromJson(const nlohmann::json& j);

}  // namespace flashtick
