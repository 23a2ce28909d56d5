// SweepEngine: one N-sweep end to end (docs/research/sweeps.md). Loads the data,
// plans every arm (one per N and seed; same architecture, optimizer, tokens per
// step and test days), runs the arms one after another or side by side
// (max_parallel_arms, each on its own backend; on CUDA each arm is placed on a free
// GPU by research/parallel/gpu_scheduler.h), then, when every arm is done:
// the gate (research/stats/gate.h: the longest N strictly best out of sample, Deflated
// Sharpe over every configuration tried, PBO by CSCV), the precision check on the
// chosen arm, and the report (research/report/) in the experiment's directory.
// Resumable: everything lives under `dir` (arms/<arm_id>/ as in arm_runner.h), so
// calling Run again on the same directory continues unfinished arms from their
// checkpoints and reuses finished ones. Cancel stops between steps, keeps what
// finished, and writes a report of it (no verdict).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "research/stats/gate.h"
#include "research/sweep/arm_result.h"
#include "research/sweep/arm_runner.h"
#include "research/sweep/precision_check.h"
#include "research/sweep/sweep_config.h"

namespace flashtick {

class ArmExecutor;   // arm_executor.h
class ProcessGroup;  // research/parallel/process_group.h

struct SweepEngineOptions {
  std::string dir;              // the experiment's directory (created if missing)
  std::string device = "cpu";   // cpu | cuda | auto, used when the config says "auto"
  int cpu_threads = 0;          // CPU backend threads when the config leaves it 0
  // GPUs the scheduler places arms on (0..gpus−1); −1 = every GPU visible when the
  // device resolves to CUDA. Arms running side by side (max_parallel_arms) each get a
  // free GPU; an arm waits when none is free.
  int gpus = -1;
  std::string python = "python3";  // runs the plot script; "" skips the plots
  std::string plot_script;      // research/report/plot_report.py; "" skips the plots
  // Where the arms train (arm_executor.h); null: in this process (RunArmPool).
  // Outlives Run.
  ArmExecutor* executor = nullptr;
  // The device of the precision check, which runs in this process after the arms:
  // "" = the arms' device; an executor that trains arms elsewhere names this
  // process's own (a coordinator without a GPU: "cpu").
  std::string precision_device;
  // The precision check of the first seed of the longest N, started as soon as that arm
  // is done while the others train (early_precision_check.h), its float64 reference on
  // this many threads: −1 = automatic (when the arms train on GPUs in this process, every
  // core but one per arm running and one more); 0 = never; n > 0 = always, n threads.
  int early_precision_threads = -1;
  // RunOneArm only: train the arm data-parallel over this process group (rendezvoused,
  // outliving the call), one replica on this process's device (docs/multi_gpu.md,
  // "One sweep arm over processes"). Null or a world of one: this process alone.
  ProcessGroup* process_group = nullptr;
};

// Where an arm trains (research/parallel/gpu_scheduler.h): sent when the scheduler places
// it (placed = true) and when it hands its GPUs back (placed = false).
struct ArmPlacement {
  int arm_index = 0;
  std::string arm_id;
  std::vector<int> gpus;  // empty: the CPU
  bool placed = true;
  int gpus_busy = 0;   // after this event
  int gpus_total = 0;  // GPUs the scheduler places arms on (0 on the CPU)
};

struct SweepEvent {
  ArmProgress arm;
  double eta_seconds = -1;  // whole sweep; −1 until a step has been timed
};

struct SweepHooks {
  std::function<void(const SweepEvent&)> on_progress;  // may be empty; any thread
  std::function<void(const ArmResult&)> on_arm;        // an arm started/finished/cancelled
  std::function<void(const ArmPlacement&)> on_placement;  // may be empty; any thread
  const std::atomic<bool>* cancel = nullptr;

  // Whether the caller has asked to cancel (false without a cancel flag).
  bool Cancelled() const { return cancel != nullptr && cancel->load(); }
};

struct SweepOutcome {
  SweepConfig config;
  std::string data_description;
  int64_t days = 0, steps_per_day = 0;
  std::vector<std::string> test_dates;
  std::string cleaning;  // CSV cleaning counts, "" for synthetic data
  std::string backend, device;
  std::vector<ArmResult> arms;  // in plan order: by N, then seed
  bool cancelled = false;
  std::optional<GateVerdict> verdict;  // when every arm finished
  std::string verdict_error;           // why there is no verdict
  int chosen_arm = -1;                 // the arm the precision check ran on
  PrecisionReport precision;
  double wall_seconds = 0;   // every call on the sweep's directory (sweep_clock.h)
  double call_seconds = 0;   // this call's share of it
  int calls = 1;             // the calls that worked on the directory, this one included
  std::vector<std::string> report_files;  // written under dir
  std::string plots_note;                 // why plots are missing, if they are
};

// "n512", or "n512-s7" when the sweep has several seeds.
std::string ArmId(int64_t context, uint64_t seed, bool several_seeds);

class SweepEngine {
 public:
  static absl::StatusOr<SweepOutcome> Run(const SweepConfig& config,
                                          const SweepEngineOptions& options,
                                          const SweepHooks& hooks);
  // Trains planned arm `arm_index` alone (plan order: by N, then seed) in
  // options.dir/arms/<arm_id>, resuming it from its checkpoints, and concludes
  // nothing: the process that ran Run and handed the arm to an ArmExecutor does. The
  // config must be the one that Run recorded in options.dir/config.json, so the plan
  // is the same. options.cpu_threads > 0 overrides the config's cpu_threads, and
  // options.device cpu or cuda its device (the coordinator resolved it; "auto" leaves
  // the config's). With options.process_group (world W > 1) every rank calls it with
  // the same arguments; the config's replicas_per_arm must be W or 1 (InvalidArgument
  // otherwise), and the result equals the in-process run with replicas_per_arm = W.
  static absl::StatusOr<ArmResult> RunOneArm(const SweepConfig& config,
                                             const SweepEngineOptions& options, int arm_index,
                                             const SweepHooks& hooks);
};

}  // namespace flashtick
