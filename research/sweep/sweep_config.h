// SweepConfig: everything one N-sweep needs (docs/research/sweeps.md,
// "Configuration"): the context lengths N (one arm per N and seed; the same architecture and
// optimizer in every arm), the data (a synthetic generator or CSV files), the label
// horizon k, the purged walk-forward, the training budget, the cost per trade and
// the gates. This struct is the engine's typed, validated view; the schema is one
// protobuf message, flashtick.v1.SweepConfig (proto/flashtick/v1/sweep_config.proto),
// whose canonical JSON mapping is the JSON of a sweep file and of SubmitSweep.
// ParseSweepConfig is a pure function (JSON text in, StatusOr out, no I/O) so a fuzz
// target can drive it; every bad field is named in one INVALID_ARGUMENT.
// SweepConfigToJson writes every field, so an experiment stores the exact
// configuration it ran and ParseSweepConfig(SweepConfigToJson(c)) == c.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/config.h"
#include "trainer/trainer.h"
#include "ticks/resample.h"
#include "research/split/walk_forward.h"
#include "research/stats/gate.h"

namespace flashtick {

struct SyntheticDataConfig {
  // planted_cue | planted_cue_null | planted_cue_tagged | planted_cue_tagged_null |
  // planted_cue_go | planted_cue_go_null | planted_cue_keyed | planted_cue_keyed_null |
  // regime_switching | long_memory | hawkes
  std::string generator = "planted_cue";
  uint64_t seed = 1;
  int days = 24;
  int64_t steps_per_day = kSessionSeconds;
  double spread_bps = 1.0;
  // planted_cue (research/synthetic/planted_cue.h)
  std::vector<int64_t> lags = {300, 3000, 15000};
  int events_per_lag_per_day = 6;
  double sigma_bps = 0.5;
  double drift_bps = 0.2;
  double motif_amplitude = 50.0;
  double flow_noise = 2.0;
  bool cross_day = false;
  // planted_cue_tagged(_null) (research/sweep/tagged_cue.h): family f's motif amplitude
  // is motif_amplitude·tag_ratio^f
  double tag_ratio = 0.1;
  // planted_cue_go(_null) (research/sweep/go_cue.h) and planted_cue_keyed(_null):
  // events a day per lag family (empty: events_per_lag_per_day for each)
  std::vector<int64_t> events_per_day;
  // planted_cue_keyed(_null) (research/synthetic/keyed_cue.h): K keys, each naming one
  // event within key_window steps (0: the longest context of the sweep)
  int keys = 16;
  int64_t key_window = 0;
  double key_spread_step = 0.5;  // key κ's spread is (2 + step·κ)× the normal spread
  int64_t key_lead = 0;          // KeyedCueConfig::key_lead: the cue's key this many steps before its sign
  double cue_key_shift = 0.0;    // KeyedCueConfig::cue_key_shift: the cue's key level this many spreads above the go's
  double cue_sign_return_bps = 0.0;  // KeyedCueConfig::cue_sign_return_bps: > 0 puts the sign in a price jump of this size, the flow a buy burst
  // regime_switching (research/synthetic/regime.h); sigma_bps is its σ as well
  double flip_prob = 1.0 / 4000.0;
  double mu_over_sigma = 0.02;
  // long_memory: returns σ·fGn(H) (research/synthetic/fgn.h)
  double hurst = 0.65;
  // hawkes (research/synthetic/hawkes.h)
  double hawkes_mu = 0.5, hawkes_alpha = 0.6, hawkes_beta = 1.0, impact_bps = 0.2;

  bool planted() const { return generator.rfind("planted_cue", 0) == 0; }
  bool tagged() const { return generator.rfind("planted_cue_tagged", 0) == 0; }
  bool go() const { return generator.rfind("planted_cue_go", 0) == 0; }  // go_cue.h
  bool keyed() const { return generator.rfind("planted_cue_keyed", 0) == 0; }  // keyed_cue.h
  bool null_twin() const {
    return generator == "planted_cue_null" || generator == "planted_cue_tagged_null" ||
           generator == "planted_cue_go_null" || generator == "planted_cue_keyed_null";
  }
};

struct CsvDataConfig {
  std::vector<std::string> paths;  // read in order, concatenated before cleaning
  std::string format = "quotes";   // quotes | bars (ticks/quotes.h, bars.h)
  std::string instrument = "CSV";
  SessionSpec session;             // the grid (open, step, steps, clock shift, ...)
  int first_day = 0;               // sessions [first_day, first_day + max_days) are used
  int max_days = 0;                // 0: every session from first_day on
};

struct SweepDataConfig {
  bool csv = false;  // which of the two below is in force
  SyntheticDataConfig synthetic;
  CsvDataConfig csv_data;
};

struct SweepModelConfig {
  int width = 64, layers = 2, heads = 4, kv_heads = 4, mlp_ratio = 4;
  double rope_theta = 10000.0;
  int rotary_dims = -1;  // ModelConfig::rotary_dims: −1 rotates the whole head
  int nope_interval = 0;  // ModelConfig::nope_interval: every k-th layer unrotated (0: none)
  // ModelConfig::exclude_self_layers: the first k layers attend to earlier steps only
  int exclude_self_layers = 0;
  // ModelConfig::fourier_feature / fourier_periods (model/input_encoding.h): the
  // feature column (ticks/features.h; −1: none) that enters as Fourier features.
  int fourier_feature = -1;
  std::vector<double> fourier_periods;
};

struct SweepOptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdamW;
  OptimizerHyper hyper = OptimizerHyper::Defaults(OptimizerKind::kAdamW);
  double learning_rate = 1e-3;
  int64_t warmup_steps = 20;
  double min_lr_ratio = 0.1;
  double grad_clip_norm = 1.0;  // 0: no clipping
  int64_t hessian_interval = 10;
  // Tokens (sequences × N) per optimizer step, the same in every arm, so every arm
  // takes the same number of steps over the same samples: B = tokens / N.
  int64_t tokens_per_step = 32768;  // a multiple of every N
  int64_t micro_batch = 0;  // sequences per micro-batch (0: the whole batch)
};

// What the first fold's validation loss is taken over (SweepTrainingConfig::validate_on).
enum class ValidateOn { kAll, kCalls };

struct SweepTrainingConfig {
  // Epoch = as many labelled tokens as the fold's new training samples. The first
  // fold trains first_fold_epochs over all its samples; each later fold continues
  // the previous model (warm start) for epochs_per_fold over the samples that are
  // new to it, drawing windows from all its training days.
  double first_fold_epochs = 2.0;
  double epochs_per_fold = 1.0;
  int64_t min_steps_per_fold = 1;
  int64_t max_steps_per_fold = 0;  // 0: no cap
  int64_t checkpoint_every_steps = 50;
  // Early stopping (first fold only: later folds fine-tune for a few steps): the last
  // validation_days of the first fold's training days are held out of its training
  // and its validation loss is measured every validate_every_steps on
  // validation_batches fixed batches; the fold stops after `patience` checks without
  // a new best. 0 validation days: no early stopping.
  int validation_days = 0;
  int64_t validate_every_steps = 50;
  int validation_batches = 4;
  int patience = 8;
  // Early stopping does not end the first fold before this many of its steps (nor
  // before its context warmup ends): on rare-event data the validation loss is flat
  // until a family of events is learned, so patience alone stops too early.
  int64_t early_stop_min_steps = 0;
  // What the validation loss is taken over: "all" labelled steps, or only the planted
  // events' "calls" (their go steps; planted generators only). A planted event family is
  // a fraction of a percent of the labelled steps, so learning one barely moves the loss
  // over all of them, and early stopping on it cannot tell an arm that has learned a
  // family from one that never will (docs/sweeps/keyed.md, third session).
  ValidateOn validate_on = ValidateOn::kAll;
  // Context curriculum of the first fold (window_sampler.h, CurriculumWindow): its
  // windows are shorter (and more of them, the same tokens a step), growing from
  // context_warmup_start to N over context_warmup_steps steps. 0 steps: N from the
  // start. Validation and test windows are always N long.
  int64_t context_warmup_steps = 0;
  int64_t context_warmup_start = 1024;
  // Wall-clock budget of an arm's training, seconds (0: none): a fold stops once the
  // arm has trained this long, after at least min_steps_per_fold of its steps.
  double max_train_seconds = 0;
  // Bitwise-repeatable training: the same config and seed give the same arm, run after
  // run, on the same GPU model and software. Every op is deterministic except the
  // attention backward's dQ, which our Flash kernel and cuDNN's default engine add
  // with atomics (their order varies); with this set the CUDA backend runs cuDNN's
  // deterministic SDPA backward instead, and an arm whose build or mode cannot fails
  // with FAILED_PRECONDITION (docs/kernels/cudnn.md, "Deterministic backward"). The
  // CPU backend is deterministic either way. Off by default: it costs backward speed.
  bool deterministic = false;
  // Restarts of the first fold chosen on the validation days (docs/research/sweeps.md,
  // "Restarts"): with restarts = k > 1 the arm trains k starts of the same data from k
  // initialisations (the arm's seed, then seeds derived from it) for restart_steps
  // steps each, and goes on with the start whose best validation loss is lowest; the
  // others are dropped. A planted family is learned in a sudden step that comes, when it
  // comes, early in training, so one start that has not taken it by then rarely does
  // (docs/sweeps/keyed.md, fifteenth session); choosing among starts on held-out
  // training days is model fitting, not a trial the Deflated Sharpe counts. Every
  // start's steps count in the arm's cost and its time budget. Needs validation_days >
  // 0; a single trainer per arm (replicas_per_arm 1, not over a process group).
  int restarts = 1;
  int64_t restart_steps = 0;
  // Restarts on a stall (docs/research/sweeps.md, "Restarts on a stall"): when early
  // stopping would end the first fold (past early_stop_min_steps, `patience` checks
  // without a new best) and the arm is within its time budget, the start is set aside and
  // a fresh one trains from a new initialisation (RestartSeed) on the same batches from
  // the fold's step 0, with the same floor and patience; at most stall_restarts times.
  // At the fold's end the start with the lowest best validation loss (the earlier on a
  // tie) goes on with its final weights. Why: a planted family is learned in a sudden
  // step within the first ~2,000 steps or, mostly, never, and an arm that has not taken
  // it plateaus (docs/sweeps/keyed.md, fifteenth session); fixed-length probes
  // (`restarts`) chose by what a start learned first and lost the long family
  // (sixteenth session), while a stall says the start is done learning. Every start's
  // steps count in the cost and max_train_seconds; choosing on held-out training days
  // is model fitting, not a trial the Deflated Sharpe counts. Needs validation_days > 0
  // and one trainer per arm; not with restarts > 1. 0: off (the arm as before).
  int stall_restarts = 0;
  // Restarts end early when a fresh start repeats an earlier one (docs/research/sweeps.md,
  // "Restarts on a stall"): a start k ≥ 1 that stalls with a best validation loss within
  // this relative distance of an earlier start's, |b_k − b_j| ≤ tolerance·b_j, ends the
  // fold instead of restarting again. Two initialisations that plateau at the same loss
  // have found the same basin (an arm that cannot see a family sits at the same call-step
  // loss in every start, twentieth session of docs/sweeps/keyed.md), so a third is
  // unlikely to find another; the rule is the same for every arm. 0: off (every stall
  // restarts while any are left).
  double stall_restart_repeat_tolerance = 0;
  // Test-day windows of N steps advance by eval_stride; only their last
  // eval_stride positions are scored, so every scored step sees between
  // N − eval_stride + 1 and N steps of context. 0: N / 8.
  int64_t eval_stride = 0;
};

struct PrecisionCheckConfig {
  bool enabled = true;
  int max_windows = 8;  // windows of the sample day compared (each N steps)
};

struct SweepConfig {
  std::string name = "sweep";
  std::vector<int64_t> contexts = {512, 4096, 32768};  // the Ns, distinct
  std::vector<uint64_t> seeds = {1};                   // one arm per (N, seed)
  SweepModelConfig model;
  SweepOptimizerConfig optimizer;
  SweepTrainingConfig training;
  SweepDataConfig data;
  int64_t horizon = 100;  // label horizon k
  // labels.alpha_bps: a fixed DeepLOB threshold α in basis points; 0 chooses the
  // balanced α on each fold's training samples (research/labels/deeplob.h).
  double label_alpha_bps = 0;
  SplitConfig walk_forward;  // context and horizon are set per arm
  bool warm_start = true;
  double cost_bps = 0.5;  // round-trip cost per trade, basis points
  GateConfig gates;
  PrecisionCheckConfig precision_check;
  std::string device = "auto";  // cpu | cuda | auto (the server's device)
  int max_parallel_arms = 1;
  // Arms that may share one GPU at a time (the scheduler spreads them first); with
  // max_parallel_arms ≥ GPUs × arms_per_gpu a small model's arms fill a large GPU.
  int arms_per_gpu = 1;
  // Data-parallel replicas per arm (research/parallel/): GPUs on CUDA, CPU backends on the
  // CPU; every N's batch (tokens_per_step / N) must be a multiple of it.
  int replicas_per_arm = 1;
  int cpu_threads = 0;  // CPU backend threads per arm; 0: the server's setting

  // The model every arm trains (max_context = the longest N).
  ModelConfig ModelFor() const;
  // Trainer options of one arm (same in every arm but the seed).
  TrainerOptions TrainerFor(uint64_t seed, int64_t total_steps) const;
  // Sequences per step for context n.
  int64_t BatchFor(int64_t n) const;
  int64_t EvalStrideFor(int64_t n) const;
  SplitConfig SplitFor(int64_t n) const;
};

namespace v1 {
class SweepConfig;
}  // namespace v1

// Parses (protobuf's JSON mapping of flashtick.v1.SweepConfig: JSON, field names and
// types) and validates (ranges, choices and the cross-field rules: distinct Ns,
// heads dividing width, lags that fit the days, enough days for the walk-forward).
absl::StatusOr<SweepConfig> ParseSweepConfig(const std::string& json_text);
// The schema's JSON, every field set; indented by 2 when indent > 0.
std::string SweepConfigToJson(const SweepConfig& config, int indent = 2);

// The message read (absent fields take their defaults) and validated as above.
absl::StatusOr<SweepConfig> SweepConfigFromProto(const v1::SweepConfig& message);
// Every field set.
v1::SweepConfig SweepConfigToProto(const SweepConfig& config);
// The rules between fields that `config` breaks, one message each (empty: none).
std::vector<std::string> SweepRuleViolations(const SweepConfig& config);

// "sharpe" | "accuracy" | "macro_f1" | "log_loss"
const char* BestByName(BestBy by);
// "all" | "calls"
const char* ValidateOnName(ValidateOn v);

}  // namespace flashtick
