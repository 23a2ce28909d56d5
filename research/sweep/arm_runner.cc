// ArmRunner (see arm_runner.h). The loop keeps one invariant that makes resume
// exact: a fold's test days are scored only after its last training step is in a
// checkpoint, and the next fold trains only after those scores are in state.json,
// so at any crash the checkpoint's step lies within the first unscored fold.
// The arm's counters (step, tokens, seconds, the steps by kind, the curves) must match
// the trainer they resume with, so every checkpoint carries the ArmResult of its save
// (TrainCheckpoint's attachment, published by the manifest's one atomic write), and
// state.json is rewritten after it. A crash between the two leaves state.json a
// checkpoint behind; Prepare then resumes from the checkpoint's copy
// (docs/research/sweeps.md, "Resume").
#include "research/sweep/arm_runner.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/file_io.h"
#include "trainer/train_checkpoint.h"
#include "trainer/trainer.h"
#include "research/parallel/data_parallel_trainer.h"
#include "research/parallel/process_group_trainer.h"
#include "ticks/features.h"
#include "research/sweep/fold_evaluator.h"
#include "research/sweep/run_location.h"
#include "research/sweep/stall_restarts.h"
#include "research/sweep/window_sampler.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kLossCurvePoints = 1000;  // loss curve kept at most this fine

std::string CkptDir(const std::string& dir, int trainer_fold) {
  return absl::StrCat(dir, "/ckpt-f", trainer_fold);
}

absl::Status SaveState(const std::string& dir, const ArmResult& r) {
  return WriteFileAtomic(dir + "/state.json", ArmResultToJson(r).dump(1));
}

constexpr char kArmStateKey[] = "arm_state";  // in the checkpoint's attachment

// The ArmResult saved with the checkpoint in `ckpt`, if the checkpoint carries one
// (those written before the attachment existed do not).
absl::StatusOr<std::optional<ArmResult>> CheckpointState(const std::string& ckpt) {
  auto attachment = TrainCheckpoint::LoadAttachment(ckpt);
  if (absl::IsNotFound(attachment.status())) return std::nullopt;
  if (!attachment.ok()) return attachment.status();
  if (!attachment->is_object() || !attachment->contains(kArmStateKey)) return std::nullopt;
  auto r = ArmResultFromJson((*attachment)[kArmStateKey]);
  if (!r.ok()) {
    return absl::DataLossError(
        absl::StrCat(ckpt, "/manifest.json: the arm state: ", r.status().message()));
  }
  return *std::move(r);
}

// One training step's cost in the arm's counters: seconds, tokens, the steps by kind
// and the memory peak.
void CountStepCost(const StepStats& s, ArmResult* r) {
  r->train_seconds += s.step_seconds;
  r->tokens += s.tokens;
  if (s.hessian_refreshed) {  // Sophia-H's HVP step (every hessian_interval steps)
    ++r->refresh_steps;
    r->refresh_step_seconds += s.step_seconds;
  } else {
    ++r->plain_steps;
    r->plain_step_seconds += s.step_seconds;
  }
  r->peak_memory_bytes = std::max(r->peak_memory_bytes, s.peak_memory_bytes);
}

// Adds one entry ("fold F ...") to the arm's stop reasons.
void AddStopReason(ArmResult* r, const std::string& entry) {
  r->stop_reason = absl::StrCat(r->stop_reason, r->stop_reason.empty() ? "" : "; ", entry);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// One arm's loop state, so the steps below read as the algorithm.
class Arm {
 public:
  Arm(const ArmInputs& in, const ArmHooks& hooks) : in_(in), hooks_(hooks), plan_(*in.plan) {}
  ~Arm() {
    std::error_code ec;
    if (!private_dir_.empty()) fs::remove_all(private_dir_, ec);
  }

  absl::StatusOr<ArmResult> Run();

 private:
  absl::Status Prepare();
  // Resumes from the arm state saved with the checkpoint to be loaded when that is
  // newer than state.json.
  absl::Status CatchUpWithCheckpoint();
  absl::Status EnsureTrainer(int fold);
  absl::Status TrainFold(int fold, const FoldLabels& labels, bool* cancelled);
  // The validation batches of the first fold (empty without validation days).
  struct Validation {
    std::vector<std::vector<float>> ticks;
    std::vector<std::vector<int32_t>> labels;
    std::vector<int64_t> calls;  // per batch, its labelled call steps ("calls" only)
  };
  // training.restarts > 1: the first fold's starts, each restart_steps long; keeps the
  // one with the lowest best validation loss as trainer_ and checkpoints it. Cancelled
  // midway, nothing of the starts is kept (a resume runs them again).
  absl::Status RunRestarts(const FoldPlan& fp, WindowSampler& sampler, const Validation& val,
                           bool* cancelled);
  // training.stall_restarts (stall_restarts.h): the first fold's current start stopped
  // early on `why` at `fold_step`; sets it aside (its trainer in its own checkpoint, its
  // curves in r_.stall_starts) and starts a fresh trainer, checkpointed at step 0.
  absl::Status RestartOnStall(const FoldPlan& fp, const std::string& why, int64_t fold_step);
  // At the first fold's end: keeps the start with the lowest best validation loss,
  // loading its trainer when it is a set-aside one; `ended` says what ended the last.
  absl::Status KeepBestStallStart(const FoldPlan& fp, const std::string& ended);
  // The window and the rows of fold step `fold_step` (the first fold's curriculum).
  std::pair<int64_t, int64_t> StepShape(int fold, int64_t fold_step) const;
  // Adds one step's loss to the loss curve (bucketed to kLossCurvePoints).
  void RecordLoss(int64_t step, double loss, int64_t end);
  // Adds one validation check to the curve and keeps the best one.
  void RecordValidation(LossPoint p);
  absl::Status Checkpoint(int trainer_fold);
  // Rank 0 of a process group, or a process alone: the one that writes and reports.
  bool Writer() const { return group() == nullptr || group()->rank() == 0; }
  // The process group when it has more than one rank, else null.
  ProcessGroup* group() const {
    return in_.group != nullptr && in_.group->world_size() > 1 ? in_.group : nullptr;
  }
  absl::Status Save() { return Writer() ? SaveState(in_.dir, r_) : absl::OkStatus(); }
  // Every rank's OR of `mine` (ProcessGroup::AnyTrue); `mine` itself when alone.
  absl::StatusOr<bool> Agreed(bool mine) {
    return group() != nullptr ? group()->AnyTrue(mine) : absl::StatusOr<bool>(mine);
  }
  // Where this process exports the model it scores: rank 0's in the arm directory, the
  // other ranks' in a private directory (they write nothing in the shared one).
  absl::StatusOr<std::string> ModelDir();
  void Report(const char* phase, int fold, double step_seconds, bool hessian_refreshed = false);
  // The plan's step: the trainer's, plus the steps an early stop skipped (arm_result.h).
  int64_t GlobalStep() const {
    return plan_.folds[trainer_fold_].first_step + lead_->step() + r_.skipped_steps;
  }
  // calls: per batch, its labelled call steps (validate_on "calls"; empty for "all").
  absl::StatusOr<double> ValidationLoss(const std::vector<std::vector<float>>& ticks,
                                        const std::vector<std::vector<int32_t>>& labels,
                                        const std::vector<int64_t>& calls);
  // Whether the time budget is spent, on this process's clock.
  bool OverTimeBudget(int64_t fold_step) const;
  // Why the fold should stop before its planned end ("" to go on); over_budget: the
  // ranks' agreed OverTimeBudget.
  std::string StopReason(int64_t fold_step, bool validating, bool over_budget) const;

  const ArmInputs& in_;
  const ArmHooks& hooks_;
  const ArmPlan& plan_;
  ArmResult r_;
  std::vector<float> features_;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<DataParallelTrainer> dp_;  // replicas > 1: trainer_ stays empty
  std::unique_ptr<ProcessGroupTrainer> pg_;  // over a process group: trainer_ stays empty
  Trainer* lead_ = nullptr;                   // trainer_, dp_'s replica 0, or pg_'s
  std::string private_dir_;                   // ModelDir of a rank other than 0
  int trainer_fold_ = -1;
  int64_t bucket_ = 1, bucket_count_ = 0;
  double bucket_sum_ = 0;
};

absl::Status Arm::Prepare() {
  if (Writer()) RETURN_IF_ERROR(MakeDirs(in_.dir));
  auto saved = ArmRunner::LoadState(in_.dir);
  if (saved.ok()) {
    r_ = *std::move(saved);
  } else if (!absl::IsNotFound(saved.status())) {
    return saved.status();
  }
  r_.arm_id = in_.arm_id;
  r_.context = plan_.context;
  r_.seed = in_.seed;
  r_.folds = static_cast<int>(plan_.folds.size());
  r_.total_steps = plan_.total_steps;
  r_.batch = plan_.batch;
  r_.backend = in_.backend->name();
  r_.train_samples = plan_.folds.back().fold.train_samples();
  r_.error.clear();
  if (r_.state != ArmState::kDone) RETURN_IF_ERROR(CatchUpWithCheckpoint());
  // Every rank has read the arm's files before rank 0 writes any: they all start from
  // the same state (a kDone arm too, so none returns while another still reads).
  if (group() != nullptr) RETURN_IF_ERROR(group()->store().Barrier(group()->NextScope("arm-read")));
  if (r_.state == ArmState::kDone) return absl::OkStatus();
  r_.ran_on = RunLocation();  // a resumed arm records where it finished
  r_.state = ArmState::kRunning;
  bucket_ = std::max<int64_t>(1, (plan_.total_steps + kLossCurvePoints - 1) / kLossCurvePoints);
  ASSIGN_OR_RETURN(features_, ArmFeatures(*in_.dataset, plan_));
  return Save();
}

absl::Status Arm::CatchUpWithCheckpoint() {
  // The checkpoint EnsureTrainer will resume the first unscored fold from.
  const std::string ckpt = CkptDir(in_.dir, in_.config->warm_start ? 0 : r_.evaluated_folds);
  ASSIGN_OR_RETURN(std::optional<ArmResult> saved, CheckpointState(ckpt));
  // Not ahead of state.json: state.json was written after this checkpoint and holds
  // everything it does, the trainer's position included, and maybe more (the scores of
  // a fold it ended, which the checkpoint saved before scoring cannot have).
  // The order of two saves of one arm is its step, except that a fresh start after a
  // stall (training.stall_restarts) takes the step back to 0 of the first fold: the
  // starts begun, which never decrease, come first.
  auto position = [](const ArmResult& a) { return std::pair(a.stall_restarts_begun, a.step); };
  if (!saved.has_value() || position(*saved) <= position(r_)) return absl::OkStatus();
  // Ahead: killed after the checkpoint was published and before state.json was
  // rewritten, so state.json is the previous save's, an earlier snapshot of the
  // same run. The checkpoint's is the state.json that save would have written; only
  // scoring writes between checkpoints, and it writes state.json before training on.
  if (saved->evaluated_folds != r_.evaluated_folds || saved->arm_id != r_.arm_id) {
    return absl::DataLossError(absl::StrCat(
        ckpt, " (arm ", saved->arm_id, ", step ", saved->step, ", ", saved->evaluated_folds,
        " folds scored) does not continue ", in_.dir, "/state.json (arm ", r_.arm_id,
        ", step ", r_.step, ", ", r_.evaluated_folds, " folds scored)"));
  }
  const ArmResult state = r_;  // the fields Prepare set from the plan
  r_ = *std::move(saved);
  r_.context = state.context;
  r_.seed = state.seed;
  r_.folds = state.folds;
  r_.total_steps = state.total_steps;
  r_.batch = state.batch;
  r_.backend = state.backend;
  r_.train_samples = state.train_samples;
  r_.error.clear();
  return absl::OkStatus();
}

absl::Status Arm::EnsureTrainer(int fold) {
  const int want = in_.config->warm_start ? 0 : fold;
  if (lead_ != nullptr && trainer_fold_ == want) return absl::OkStatus();
  lead_ = nullptr;
  trainer_.reset();
  dp_.reset();
  pg_.reset();
  const std::string ckpt = CkptDir(in_.dir, want);
  // With warm start one schedule spans the arm: warmup and cosine over the first
  // fold, then the floor rate while later folds fine-tune.
  const TrainerOptions options = in_.config->TrainerFor(in_.seed, plan_.folds[want].steps);
  const bool resume = fs::exists(ckpt + "/manifest.json");
  if (!resume && !in_.config->warm_start) r_.skipped_steps = 0;  // a fresh trainer per fold
  auto make = [&](Backend* be) -> absl::StatusOr<std::unique_ptr<Trainer>> {
    if (resume) return TrainCheckpoint::Load(ckpt, be);
    return Trainer::Create(in_.config->ModelFor(), options, be);
  };
  if (group() != nullptr) {  // every rank from the same checkpoint or seed
    // The checkpoint rank 0 may overwrite is read first: rank 0 writes it only after a
    // step, which waits for every rank's replica (ProcessGroupTrainer::CreateOn).
    ProcessGroupTrainerOptions pgo;
    pgo.collective_timeout_seconds = group()->collective_timeout_seconds();
    if (!in_.gpus.empty()) pgo.gpu = in_.gpus[0];
    ASSIGN_OR_RETURN(pg_, ProcessGroupTrainer::CreateOn(in_.backend, pgo, *group(), make));
    lead_ = &pg_->trainer();
  } else if (in_.replicas.size() > 1) {  // every replica from the same checkpoint or seed
    ASSIGN_OR_RETURN(dp_, DataParallelTrainer::CreateOn(in_.replicas, in_.gpus, make));
    lead_ = &dp_->replica(0);
  } else {
    ASSIGN_OR_RETURN(trainer_, make(in_.backend));
    lead_ = trainer_.get();
  }
  if (trainer_fold_ >= 0 && trainer_fold_ != want && Writer()) {
    std::error_code ec;
    fs::remove_all(CkptDir(in_.dir, trainer_fold_), ec);  // a finished fold's trainer
  }
  trainer_fold_ = want;
  return absl::OkStatus();
}

absl::Status Arm::Checkpoint(int trainer_fold) {
  r_.step = GlobalStep();
  if (!Writer()) return absl::OkStatus();
  // The arm state goes inside the checkpoint, so a resume pairs the trainer with the
  // counters of the same save even when the kill lands before state.json (see above).
  RETURN_IF_ERROR(TrainCheckpoint::Save(*lead_, CkptDir(in_.dir, trainer_fold),
                                        nlohmann::json{{kArmStateKey, ArmResultToJson(r_)}}));
  return SaveState(in_.dir, r_);
}

void Arm::Report(const char* phase, int fold, double step_seconds, bool hessian_refreshed) {
  if (!hooks_.on_progress || !Writer()) return;
  ArmProgress p;
  p.arm_index = in_.arm_index;
  p.arm_id = r_.arm_id;
  p.context = r_.context;
  p.seed = r_.seed;
  p.phase = phase;
  p.fold = fold;
  p.folds = r_.folds;
  p.epoch = r_.epochs();
  p.step = r_.step;
  p.total_steps = r_.total_steps;
  p.loss = r_.loss;
  p.step_seconds = step_seconds;
  p.tokens_per_second = r_.tokens_per_second();
  p.peak_memory_bytes = r_.peak_memory_bytes;
  p.hessian_refreshed = hessian_refreshed;
  hooks_.on_progress(p);
}

absl::StatusOr<double> Arm::ValidationLoss(const std::vector<std::vector<float>>& ticks,
                                           const std::vector<std::vector<int32_t>>& labels,
                                           const std::vector<int64_t>& calls) {
  if (in_.config->training.validate_on == ValidateOn::kAll) {  // every batch has labelled steps
    double sum = 0;
    for (size_t i = 0; i < ticks.size(); ++i) {
      ASSIGN_OR_RETURN(double loss, lead_->EvalLoss(ticks[i], labels[i], plan_.batch, plan_.context));
      sum += loss;
    }
    return sum / static_cast<double>(ticks.size());
  }
  // Call steps only: a batch may hold none, and the mean is over call steps, so each
  // batch's mean loss counts by its number of them.
  if (calls.size() != ticks.size())
    return absl::InternalError("validate_on calls: one call-step count per batch expected; this is a bug");
  double sum = 0;
  int64_t count = 0;
  for (size_t i = 0; i < ticks.size(); ++i) {
    if (calls[i] == 0) continue;
    ASSIGN_OR_RETURN(double loss, lead_->EvalLoss(ticks[i], labels[i], plan_.batch, plan_.context));
    sum += loss * static_cast<double>(calls[i]);
    count += calls[i];
  }
  return sum / static_cast<double>(count);  // count > 0: checked when the batches were drawn
}

// Keeps the labels of a validation batch's planted call steps and unlabels every other
// row (training.validate_on "calls"). calls: the events' call steps on the grid,
// sorted; starts: each window's first global step (WindowSampler::Batch).
int64_t KeepCallSteps(const std::vector<int64_t>& calls, const std::vector<int64_t>& starts,
                      int64_t n, std::vector<int32_t>* labels) {
  std::vector<int32_t> kept(labels->size(), -1);
  int64_t count = 0;
  for (size_t b = 0; b < starts.size(); ++b) {
    auto it = std::lower_bound(calls.begin(), calls.end(), starts[b]);
    for (; it != calls.end() && *it < starts[b] + n; ++it) {
      const size_t row = b * static_cast<size_t>(n) + static_cast<size_t>(*it - starts[b]);
      kept[row] = (*labels)[row];
      count += kept[row] >= 0;
    }
  }
  *labels = std::move(kept);
  return count;
}

bool Arm::OverTimeBudget(int64_t fold_step) const {
  const SweepTrainingConfig& t = in_.config->training;
  return t.max_train_seconds > 0 && r_.train_seconds >= t.max_train_seconds &&
         fold_step >= t.min_steps_per_fold;
}

std::string Arm::StopReason(int64_t fold_step, bool validating, bool over_budget) const {
  const SweepTrainingConfig& t = in_.config->training;
  if (over_budget) return absl::StrCat("time budget: ", t.max_train_seconds, " s of training");
  // Early stopping reads the validation curve, computed by every rank from identical
  // replicas on the same batches; TrainFold still agrees on the decision (see there).
  const std::vector<LossPoint>& v = r_.validation_curve;
  if (!validating || v.empty()) return "";
  if (fold_step < std::max(t.early_stop_min_steps, t.context_warmup_steps)) return "";
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) best = v[i].loss < v[best].loss ? i : best;
  if (static_cast<int64_t>(v.size() - 1 - best) >= t.patience) {
    return absl::StrCat("early stop: ", t.validate_on == ValidateOn::kCalls ? "call-step " : "",
                        "validation loss ", v[best].loss, " at step ", v[best].step,
                        " not beaten in ", t.patience, " checks");
  }
  return "";
}

absl::Status Arm::TrainFold(int fold, const FoldLabels& labels, bool* cancelled) {
  const FoldPlan& fp = plan_.folds[fold];
  const SweepTrainingConfig& tc = in_.config->training;
  std::vector<int64_t> offsets;
  for (int d = 0; d < in_.dataset->num_days(); ++d) {
    offsets.push_back(in_.dataset->context().day_offset(d));
  }
  // Early stopping holds the first fold's last training days out (sweep_config.h).
  Fold train_fold = fp.fold;
  Validation val_set;
  std::vector<std::vector<float>>& val_ticks = val_set.ticks;
  std::vector<std::vector<int32_t>>& val_y = val_set.labels;
  std::vector<int64_t>& val_calls = val_set.calls;
  if (fold == 0 && tc.validation_days > 0) {
    Fold val_fold = fp.fold;
    const std::vector<int>& days = fp.fold.train_days;
    const int first_val = days.size() > static_cast<size_t>(tc.validation_days)
                              ? days[days.size() - tc.validation_days]
                              : days.front();
    train_fold.train.clear();
    val_fold.train.clear();
    for (const SampleRange& r : fp.fold.train) {
      (r.day >= first_val ? val_fold : train_fold).train.push_back(r);
    }
    if (train_fold.train.empty() || val_fold.train.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "training.validation_days ", tc.validation_days, " leaves the first fold no ",
          train_fold.train.empty() ? "training" : "validation", " samples"));
    }
    WindowSampler val(&features_, kNumFeatures, offsets, val_fold, labels.classes,
                      plan_.context);
    val_ticks.resize(tc.validation_batches);
    val_y.resize(tc.validation_batches);
    const bool on_calls = tc.validate_on == ValidateOn::kCalls;
    std::vector<int64_t> calls, starts;
    if (on_calls) {
      for (const PlantedEvent& e : in_.data->events) calls.push_back(e.call_step);
      std::sort(calls.begin(), calls.end());
    }
    int64_t call_rows = 0;
    for (int b = 0; b < tc.validation_batches; ++b) {  // fixed: the same batches every check
      val.Batch(in_.seed ^ 0x5EED, /*fold_index=*/-1, b, plan_.batch, &val_ticks[b], &val_y[b],
                /*window=*/0, on_calls ? &starts : nullptr);
      if (on_calls) {
        val_calls.push_back(KeepCallSteps(calls, starts, plan_.context, &val_y[b]));
        call_rows += val_calls.back();
      }
    }
    if (on_calls && call_rows == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "training.validate_on \"calls\": the ", tc.validation_batches,
          " validation batches hold no labelled call step of a planted event; raise "
          "training.validation_batches or training.validation_days"));
    }
  }
  WindowSampler sampler(&features_, kNumFeatures, offsets, train_fold, labels.classes,
                        plan_.context);
  if (fold == 0 && tc.restarts > 1 && GlobalStep() == fp.first_step && !val_ticks.empty()) {
    RETURN_IF_ERROR(RunRestarts(fp, sampler, val_set, cancelled));
    if (*cancelled) return absl::OkStatus();
  }
  // Restarts on a stall: the first fold's starts each train from the fold's step 0 (its
  // trainer's step), the choice among them made once, when the fold ends.
  const bool stall_restarts = fold == 0 && tc.stall_restarts > 0 && !val_ticks.empty();
  if (stall_restarts && trainer_ == nullptr) {
    return absl::FailedPreconditionError(
        "training.stall_restarts trains one start at a time on one trainer; this arm runs "
        "replicas or a process group");
  }
  std::string ended;  // what ended the last start (stall restarts)
  std::vector<float> ticks;
  std::vector<int32_t> y;
  const int64_t end = fp.first_step + fp.steps;
  const int64_t every = tc.checkpoint_every_steps;
  while (GlobalStep() < end) {
    // The cancel flag and the time budget are this process's (a signal, its clock):
    // over a process group every rank stops when any would (ProcessGroup::AnyTrue).
    // The budget's collective runs only when there is a budget, the same on all ranks.
    ASSIGN_OR_RETURN(const bool stop, Agreed(hooks_.stop_requested && hooks_.stop_requested()));
    if (stop) {
      *cancelled = true;
      return Checkpoint(trainer_fold_);
    }
    const int64_t fold_step = GlobalStep() - fp.first_step;
    bool over_budget = false;
    if (tc.max_train_seconds > 0) {
      ASSIGN_OR_RETURN(over_budget, Agreed(OverTimeBudget(fold_step)));
    }
    std::string why = StopReason(fold_step, !val_ticks.empty(), over_budget);
    if (group() != nullptr && !val_ticks.empty()) {
      // Early stopping reads validation losses that every rank computes from identical
      // replicas: equal bit for bit on the CPU, but GPUs of different nodes may pick
      // different cuBLASLt algorithms and differ in the last bits, and one rank
      // stopping alone would leave the others waiting in a collective. So it is agreed.
      ASSIGN_OR_RETURN(const bool any, Agreed(!why.empty()));
      if (any && why.empty()) why = "early stop (another rank's validation loss)";
    }
    const bool stalled = !why.empty() && !over_budget;  // StopReason's early-stop rule
    // Why a stalled start is not restarted: none left, or it repeats an earlier start's
    // best validation loss (training.stall_restart_repeat_tolerance, stall_restarts.h).
    const std::string no_restart =
        stalled && stall_restarts
            ? WhyNoStallRestart(r_, tc.stall_restarts, tc.stall_restart_repeat_tolerance)
            : std::string();
    if (stalled && stall_restarts && no_restart.empty()) {
      RETURN_IF_ERROR(RestartOnStall(fp, why, fold_step));
      continue;
    }
    if (!why.empty()) {
      r_.skipped_steps += end - GlobalStep();
      std::string what = absl::StrCat(why, " (", fold_step, " of ", fp.steps, " steps)");
      if (stall_restarts) {  // which start it ended
        what = absl::StrCat("start ", r_.stall_restarts_begun, " ", what,
                            stalled ? absl::StrCat(", ", no_restart) : "");
        ended = absl::StrCat(stalled ? "stalled" : "stopped by the time budget", " at step ",
                             fold_step, stalled ? absl::StrCat(" (", no_restart, ")") : "");
      }
      AddStopReason(&r_, absl::StrCat("fold ", fold, " ", what));
      break;
    }
    const auto [window, batch] = StepShape(fold, fold_step);
    sampler.Batch(in_.seed, fold, fold_step, batch, &ticks, &y, window);
    // Over a process group the loss is the all-reduced one, equal on every rank.
    ASSIGN_OR_RETURN(StepStats s, pg_ != nullptr   ? pg_->TrainStep(ticks, y, batch, window)
                                  : dp_ != nullptr ? dp_->TrainStep(ticks, y, batch, window)
                                                   : trainer_->TrainStep(ticks, y, batch, window));
    r_.step = GlobalStep();
    r_.loss = s.loss;
    CountStepCost(s, &r_);
    RecordLoss(r_.step, s.loss, end);
    Report("train", fold, s.step_seconds, s.hessian_refreshed);
    if (!val_ticks.empty() && (fold_step + 1) % tc.validate_every_steps == 0) {
      ASSIGN_OR_RETURN(double v, ValidationLoss(val_ticks, val_y, val_calls));
      RecordValidation({r_.step, v});
    }
    if (r_.step % every == 0 && r_.step < end) RETURN_IF_ERROR(Checkpoint(trainer_fold_));
  }
  // A resumed arm whose checkpoint holds the choice does not choose again.
  if (stall_restarts && r_.restart_choice.empty()) RETURN_IF_ERROR(KeepBestStallStart(fp, ended));
  RETURN_IF_ERROR(Checkpoint(trainer_fold_));  // the fold's model, before its test days are scored
  // The choice is in that checkpoint: the set-aside starts are no longer needed.
  if (stall_restarts && Writer()) RemoveStallStartDirs(in_.dir);
  return absl::OkStatus();
}

std::pair<int64_t, int64_t> Arm::StepShape(int fold, int64_t fold_step) const {
  const SweepTrainingConfig& tc = in_.config->training;
  // The context curriculum applies to the first fold only (later folds fine-tune):
  // shorter windows, more of them, the same tokens per step.
  const int64_t window = fold == 0 ? CurriculumWindow(plan_.context, tc.context_warmup_start,
                                                      tc.context_warmup_steps, fold_step)
                                   : plan_.context;
  return {window, plan_.batch * (plan_.context / window)};
}

void Arm::RecordValidation(LossPoint p) {
  r_.validation_curve.push_back(p);
  if (r_.validation_curve.size() == 1 || p.loss < r_.best_validation_loss) {
    r_.best_validation_loss = p.loss;
    r_.best_validation_step = p.step;
  }
}

void Arm::RecordLoss(int64_t step, double loss, int64_t end) {
  bucket_sum_ += loss;
  if (++bucket_count_ == bucket_ || step == end) {
    r_.loss_curve.push_back({step, bucket_sum_ / bucket_count_});
    bucket_sum_ = 0;
    bucket_count_ = 0;
  }
}

absl::Status Arm::RunRestarts(const FoldPlan& fp, WindowSampler& sampler, const Validation& val,
                              bool* cancelled) {
  const SweepTrainingConfig& tc = in_.config->training;
  if (trainer_ == nullptr || dp_ != nullptr || pg_ != nullptr) {
    return absl::FailedPreconditionError(
        "training.restarts > 1 trains one start at a time on one trainer; this arm runs "
        "replicas or a process group");
  }
  const int64_t steps = std::min(tc.restart_steps, fp.steps);
  const int64_t end = fp.first_step + fp.steps;
  // Every start's steps count in the arm's cost (and its time budget) as they run; a
  // cancel puts the arm back as it was before the starts.
  const ArmResult before = r_;
  struct Kept {
    std::unique_ptr<Trainer> trainer;
    std::vector<double> losses;
    std::vector<LossPoint> validation;
    int index = -1;
  } kept;
  std::vector<double> best_per_start;
  std::vector<std::string> bests;
  std::vector<float> ticks;
  std::vector<int32_t> y;
  for (int k = 0; k < tc.restarts; ++k) {
    std::unique_ptr<Trainer> t;
    if (k == 0) {
      t = std::move(trainer_);
    } else {
      ASSIGN_OR_RETURN(t, Trainer::Create(in_.config->ModelFor(),
                                          in_.config->TrainerFor(RestartSeed(in_.seed, k), fp.steps),
                                          in_.backend));
    }
    lead_ = t.get();  // ValidationLoss and the budget read the start being trained
    std::vector<double> losses;
    std::vector<LossPoint> validation;
    double best = std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < steps; ++i) {
      if (hooks_.stop_requested && hooks_.stop_requested()) {
        *cancelled = true;
        r_ = before;
        lead_ = nullptr;  // no start is kept: the arm's state is as before the starts
        return absl::OkStatus();
      }
      if (tc.max_train_seconds > 0 && r_.train_seconds >= tc.max_train_seconds &&
          i >= tc.min_steps_per_fold) {
        break;  // the budget covers every start; the choice is made among what ran
      }
      const auto [window, batch] = StepShape(0, i);
      sampler.Batch(in_.seed, 0, i, batch, &ticks, &y, window);
      ASSIGN_OR_RETURN(StepStats s, t->TrainStep(ticks, y, batch, window));
      CountStepCost(s, &r_);
      losses.push_back(s.loss);
      r_.step = fp.first_step + i + 1;  // for the progress report only
      r_.loss = s.loss;
      Report("train", 0, s.step_seconds, s.hessian_refreshed);
      if ((i + 1) % tc.validate_every_steps == 0 || i + 1 == steps) {
        ASSIGN_OR_RETURN(double v, ValidationLoss(val.ticks, val.labels, val.calls));
        validation.push_back({fp.first_step + i + 1, v});
        best = std::min(best, v);
      }
    }
    bests.push_back(absl::StrFormat("%.4g", best));
    best_per_start.push_back(best);
    if (ChooseStart(best_per_start) == static_cast<size_t>(k)) {  // the newest is the best so far
      kept = {std::move(t), std::move(losses), std::move(validation), k};
    }
  }
  trainer_ = std::move(kept.trainer);
  lead_ = trainer_.get();
  for (size_t j = 0; j < kept.losses.size(); ++j) {
    r_.loss = kept.losses[j];
    RecordLoss(fp.first_step + static_cast<int64_t>(j) + 1, kept.losses[j], end);
  }
  for (const LossPoint& p : kept.validation) RecordValidation(p);
  r_.restart_choice = absl::StrCat(tc.restarts, " starts of ", steps, " steps; kept start ",
                                   kept.index, " (seed ", RestartSeed(in_.seed, kept.index),
                                   "); best validation loss per start: ",
                                   absl::StrJoin(bests, ", "));
  // The choice is durable before the kept start trains on.
  return Checkpoint(trainer_fold_);
}

absl::Status Arm::RestartOnStall(const FoldPlan& fp, const std::string& why, int64_t fold_step) {
  const int k = r_.stall_restarts_begun;  // the stalled start
  // Its trainer as it stopped (the first fold's trainer step is the fold step): the
  // choice at the fold's end may keep it.
  if (Writer()) RETURN_IF_ERROR(TrainCheckpoint::Save(*lead_, StallStartDir(in_.dir, k)));
  AddStopReason(&r_, absl::StrCat("fold 0 start ", k, " ", why, " (", fold_step, " of ", fp.steps,
                                  " steps), set aside for start ", k + 1));
  // Over kLossCurvePoints steps a point averages several: the stalled start's last,
  // partial one closes its curve, and the fresh start's curve begins afresh.
  if (bucket_count_ > 0) r_.loss_curve.push_back({r_.step, bucket_sum_ / bucket_count_});
  bucket_sum_ = 0;
  bucket_count_ = 0;
  r_.stall_starts.push_back(TakeStart(&r_, k, RestartSeed(in_.seed, k), fold_step,
                                      absl::StrCat("stalled at step ", fold_step)));
  ++r_.stall_restarts_begun;
  ASSIGN_OR_RETURN(trainer_, Trainer::Create(in_.config->ModelFor(),
                                             in_.config->TrainerFor(RestartSeed(in_.seed, k + 1),
                                                                    fp.steps),
                                             in_.backend));
  lead_ = trainer_.get();
  // Durable before it trains: a resume finds it in ckpt-f0 and the stalled start in
  // r_.stall_starts (CatchUpWithCheckpoint orders saves by the starts begun, then step).
  return Checkpoint(trainer_fold_);
}

absl::Status Arm::KeepBestStallStart(const FoldPlan& fp, const std::string& ended) {
  const int k = r_.stall_restarts_begun;  // the last start, the one training
  const int64_t steps = lead_->step();
  const std::string what = !ended.empty()        ? ended
                           : steps == fp.steps ? absl::StrCat("ran its ", fp.steps, " planned steps")
                                               : absl::StrCat("stopped at step ", steps);
  if (k > 0 && ended.empty()) {  // every start is in stop_reason once one was set aside
    AddStopReason(&r_, absl::StrCat("fold 0 start ", k, " ", what));
  }
  const FirstFoldStart kept =
      KeepBestStart(&r_, TakeStart(&r_, k, RestartSeed(in_.seed, k), steps, what),
                    in_.config->training.stall_restarts);
  if (kept.index == k) return absl::OkStatus();  // the trainer in hand
  // An earlier start, with its final weights from its checkpoint.
  ASSIGN_OR_RETURN(trainer_, TrainCheckpoint::Load(StallStartDir(in_.dir, kept.index), in_.backend));
  lead_ = trainer_.get();
  // skipped_steps held the plan's steps the last start left out; now the kept one's.
  r_.skipped_steps += steps - kept.steps;
  bucket_sum_ = 0;  // the last start's partial loss-curve point is not the kept one's
  bucket_count_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<std::string> Arm::ModelDir() {
  if (Writer()) return in_.dir + "/model";
  if (private_dir_.empty()) {
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);  // $TMPDIR, else /tmp
    if (ec) return absl::FailedPreconditionError(absl::StrCat("no temporary directory: ",
                                                              ec.message()));
    const fs::path p = tmp / absl::StrCat("flashtick-arm-", r_.arm_id, "-rank", group()->rank(),
                                          "-", static_cast<int64_t>(::getpid()));
    RETURN_IF_ERROR(MakeDirs(p.string()));
    private_dir_ = p.string();
  }
  return private_dir_ + "/model";
}

absl::StatusOr<ArmResult> Arm::Run() {
  RETURN_IF_ERROR(Prepare());
  if (r_.state == ArmState::kDone) return r_;
  for (int fold = r_.evaluated_folds; fold < r_.folds; ++fold) {
    ASSIGN_OR_RETURN(FoldLabels labels, in_.dataset->LabelFold(plan_.folds[fold].fold));
    RETURN_IF_ERROR(EnsureTrainer(fold));
    bool cancelled = false;
    RETURN_IF_ERROR(TrainFold(fold, labels, &cancelled));
    if (cancelled) {
      r_.state = ArmState::kCancelled;
      RETURN_IF_ERROR(Save());
      return r_;
    }
    Report("test", fold, 0);
    const auto t0 = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(const std::string model_dir, ModelDir());
    RETURN_IF_ERROR(lead_->ExportModel(model_dir));
    RETURN_IF_ERROR(EvaluateFold(*in_.dataset, *in_.data, plan_, fold, labels, features_,
                                 model_dir, in_.backend, in_.config->cost_bps, &r_));
    r_.eval_seconds += Seconds(t0);
    r_.evaluated_folds = fold + 1;
    RETURN_IF_ERROR(Save());
  }
  r_.state = ArmState::kDone;
  RETURN_IF_ERROR(Save());
  Report("done", r_.folds - 1, 0);
  return r_;
}

}  // namespace

absl::StatusOr<ArmResult> ArmRunner::LoadState(const std::string& dir) {
  const std::string path = dir + "/state.json";
  if (!fs::exists(path)) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::DataLossError(absl::StrCat(path, " is not JSON"));
  auto r = ArmResultFromJson(j);
  if (!r.ok()) return absl::DataLossError(absl::StrCat(path, ": ", r.status().message()));
  return r;
}

absl::StatusOr<ArmResult> ArmRunner::Run(const ArmInputs& in, const ArmHooks& hooks) {
  if (in.config == nullptr || in.dataset == nullptr || in.data == nullptr || in.plan == nullptr ||
      in.backend == nullptr) {
    return absl::InvalidArgumentError("arm runner: missing inputs");
  }
  if (in.group != nullptr && in.group->world_size() > 1 && in.replicas.size() > 1) {
    return absl::InvalidArgumentError(
        "arm runner: replicas in this process and a process group together; one replica "
        "per process over a group");
  }
  Arm arm(in, hooks);
  return arm.Run();
}

}  // namespace flashtick
