// SweepEngine (see sweep_engine.h): plans the arms, hands them to the arm pool
// (arm_pool.h: worker threads, GPU placement) and concludes the sweep.
#include "research/sweep/sweep_engine.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "kernels/backend.h"
#include "research/report/sweep_report.h"
#include "research/split/research_dataset.h"
#include "research/sweep/arm_executor.h"
#include "research/sweep/arm_plan.h"
#include "research/sweep/arm_pool.h"
#include "research/sweep/day_predictor.h"
#include "research/sweep/early_precision_check.h"
#include "research/sweep/rank_arm.h"
#include "research/sweep/sweep_clock.h"
#include "research/sweep/sweep_data.h"

namespace flashtick {
namespace {

// Per-N outcomes for the gate: one seed → the arm itself; several → the
// equal-weight average of the seeds' daily returns and their pooled metrics, with
// each seed's own series for the DSR (research/stats/gate.h: trials, like with like).
absl::StatusOr<std::vector<ArmOutcome>> Outcomes(const SweepConfig& c,
                                                 const std::vector<ArmResult>& arms) {
  std::vector<ArmOutcome> out;
  const size_t per_n = c.seeds.size();
  for (size_t i = 0; i < c.contexts.size(); ++i) {
    ArmOutcome o;
    o.context = c.contexts[i];
    o.name = absl::StrCat("N=", o.context);
    std::vector<ClassificationMetrics> days;
    for (size_t s = 0; s < per_n; ++s) {
      const ArmResult& a = arms[i * per_n + s];
      const std::vector<double> r = a.daily_returns();
      if (o.daily_returns.empty()) o.daily_returns.assign(r.size(), 0.0);
      if (r.size() != o.daily_returns.size()) {
        return absl::InternalError(absl::StrCat("arm ", a.arm_id, " has a different test-day count"));
      }
      for (size_t t = 0; t < r.size(); ++t) o.daily_returns[t] += r[t] / per_n;
      for (const DayResult& d : a.days) days.push_back(d.metrics);
      if (per_n > 1) o.seed_daily_returns.push_back(r);
    }
    ASSIGN_OR_RETURN(o.metrics, PoolMetrics(days));
    out.push_back(std::move(o));
  }
  return out;
}

// Creates the experiment's directory, clears what an interrupted run left in it, and
// records the configuration beside the results.
absl::Status PrepareDir(const SweepConfig& config, const std::string& dir) {
  RETURN_IF_ERROR(MakeDirs(dir + "/arms"));
  // A process killed mid-write (kill -9 during a sweep) leaves a temporary file beside
  // the state, report or checkpoint it was replacing; a resumed sweep clears them.
  for (const std::string& path : RemoveInterruptedAtomicWrites(dir)) {
    std::fprintf(stderr, "sweep %s: removed %s, left by a write that was interrupted\n",
                 dir.c_str(), path.c_str());
  }
  return WriteFileAtomic(dir + "/config.json", SweepConfigToJson(config));
}

// One slot per N and seed, by N then seed: the order of SweepOutcome::arms, which
// Outcomes and the chosen arm's index rely on. Every arm must test the same days,
// since the gate compares the arms' daily returns day by day.
absl::StatusOr<std::vector<ArmSlot>> PlanArms(const SweepConfig& config,
                                              const ResearchDataset& dataset) {
  std::vector<ArmSlot> slots;
  for (int64_t n : config.contexts) {
    for (uint64_t seed : config.seeds) {
      ArmSlot s{n, seed, ArmId(n, seed, config.seeds.size() > 1), {}};
      ASSIGN_OR_RETURN(s.plan, PlanArm(config, dataset.day_steps(), n));
      if (!slots.empty() && s.plan.test_days != slots.front().plan.test_days) {
        return absl::InternalError(absl::StrCat("arm ", s.id, " tests other days than ",
                                                slots.front().id));
      }
      slots.push_back(std::move(s));
    }
  }
  return slots;
}

// The outcome's description of the data and the test days, known before any arm runs.
SweepOutcome DescribeData(const SweepConfig& config, const SweepData& data,
                          const ResearchDataset& dataset, const std::vector<ArmSlot>& slots) {
  SweepOutcome out;
  out.config = config;
  out.data_description = data.description;
  out.days = dataset.num_days();
  out.steps_per_day = dataset.context().day_steps(0);
  if (config.data.csv) out.cleaning = data.cleaning.ToString();
  for (int d : slots.front().plan.test_days) out.test_dates.push_back(dataset.context().date(d));
  return out;
}

// Where the arms run and how many side by side: the config's device and CPU threads
// unless it leaves them to the caller ("auto", 0), and the GPUs visible to a CUDA
// (or auto) sweep, capped by options.gpus.
absl::StatusOr<ArmPoolSetup> PoolSetup(const SweepConfig& config,
                                       const SweepEngineOptions& options,
                                       const ResearchDataset& dataset, const SweepData& data,
                                       const std::vector<ArmSlot>& slots) {
  ArmPoolSetup setup;
  setup.config = &config;
  setup.dataset = &dataset;
  setup.data = &data;
  setup.slots = &slots;
  setup.dir = options.dir;
  setup.device = config.device == "auto" ? options.device : config.device;
  setup.threads = config.cpu_threads > 0 ? config.cpu_threads : options.cpu_threads;
  setup.parallel = std::min<int>(config.max_parallel_arms, static_cast<int>(slots.size()));
  const int visible_gpus = setup.device == "cuda" || setup.device == "auto"
                               ? DeviceCount(DeviceKind::kCuda)
                               : 0;
  setup.gpus = options.gpus >= 0 ? std::min(options.gpus, visible_gpus) : visible_gpus;
  if (setup.device == "cuda" && options.gpus == 0)
    return absl::InvalidArgumentError("device cuda with gpus = 0: no GPU to place arms on");
  return setup;
}

// The first failed arm in plan order fails the sweep, named by its arm.
absl::Status FirstArmError(const std::vector<ArmSlot>& slots,
                           const std::vector<absl::Status>& errors) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!errors[i].ok()) {
      return absl::Status(errors[i].code(),
                          absl::StrCat("arm ", slots[i].id, ": ", errors[i].message()));
    }
  }
  return absl::OkStatus();
}

// Arms that never started (cancelled before their turn) keep what is on disk from an
// earlier run, or else their plan's shape, so the report lists every arm.
void FillUnstartedArms(const std::vector<ArmSlot>& slots, const std::string& dir,
                       std::vector<ArmResult>* arms) {
  for (size_t i = 0; i < slots.size(); ++i) {
    ArmResult& a = (*arms)[i];
    if (!a.arm_id.empty()) continue;
    auto saved = ArmRunner::LoadState(dir + "/arms/" + slots[i].id);
    if (saved.ok()) {
      a = *std::move(saved);
    } else {
      a.arm_id = slots[i].id;
      a.context = slots[i].context;
      a.seed = slots[i].seed;
      a.total_steps = slots[i].plan.total_steps;
      a.folds = static_cast<int>(slots[i].plan.folds.size());
    }
  }
}

bool AllDone(const std::vector<ArmResult>& arms) {
  bool all_done = true;
  for (const ArmResult& a : arms) all_done &= a.state == ArmState::kDone;
  return all_done;
}

// The gate's verdict (research/stats/gate.h) and the arm the precision check runs on:
// the first seed of the best N, or of the longest when none is best. No verdict for
// a cancelled sweep or a single N; verdict_error says why.
absl::Status Judge(const SweepConfig& config, size_t arm_count, SweepOutcome* out) {
  if (!out->cancelled && arm_count >= 2 && config.contexts.size() >= 2) {
    ASSIGN_OR_RETURN(std::vector<ArmOutcome> outcomes, Outcomes(config, out->arms));
    auto verdict = EvaluateGate(outcomes, config.gates);
    if (verdict.ok()) {
      out->verdict = *verdict;
      const int n_index = verdict->best_arm >= 0 ? verdict->best_arm : verdict->longest_arm;
      out->chosen_arm = n_index * static_cast<int>(config.seeds.size());
    } else {
      out->verdict_error = std::string(verdict.status().message());
    }
  } else if (out->cancelled) {
    out->verdict_error = "the sweep was cancelled before every arm finished; no verdict";
  } else {
    out->verdict_error = "a verdict needs at least two context lengths";
  }
  return absl::OkStatus();
}

// The precision check (precision_check.h) of an arm's saved model on its last test day,
// on a fresh backend of `device` with the sweep's CPU threads, the float64 reference on
// `reference_threads` (0: every core; after the arms nothing else runs). The caller's
// cancel ends it between layers with CANCELLED.
absl::StatusOr<PrecisionReport> CheckArm(const SweepConfig& config,
                                         const ResearchDataset& dataset, const ArmSlot& s,
                                         const ArmPoolSetup& setup, const std::string& device,
                                         int reference_threads, const SweepHooks& hooks) {
  const int day = s.plan.test_days.back();
  ASSIGN_OR_RETURN(FoldLabels labels, dataset.LabelFold(s.plan.folds.back().fold));
  ASSIGN_OR_RETURN(std::vector<float> features, ArmFeatures(dataset, s.plan));
  BackendOptions bo;
  bo.threads = setup.threads;
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(device, bo));
  std::vector<EvalWindow> windows = PlanDayWindows(dataset.context().day_offset(day),
                                                   labels.classes[day], s.context,
                                                   s.plan.eval_stride);
  ASSIGN_OR_RETURN(PrecisionReport report,
                   RunPrecisionCheck(setup.dir + "/arms/" + s.id + "/model", backend.get(),
                                     features, std::move(windows), s.context, s.plan.batch,
                                     config.precision_check.max_windows, reference_threads,
                                     [&hooks] { return hooks.Cancelled(); }));
  report.arm_id = s.id;
  report.date = dataset.context().date(day);
  return report;
}

// The reference threads of the early precision check (sweep_engine.h,
// early_precision_threads), or 0 when it does not run.
int EarlyPrecisionThreads(const SweepConfig& config, const SweepEngineOptions& options,
                          const ArmPoolSetup& setup) {
  if (!config.precision_check.enabled || config.contexts.size() < 2) return 0;
  if (options.early_precision_threads >= 0) return options.early_precision_threads;
  // Automatic: only when the arms train on GPUs in this process, so the CPU is free
  // but for the threads launching their work.
  if (options.executor != nullptr || setup.gpus < 1 || setup.device == "cpu") return 0;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int launching = setup.parallel * std::max(1, config.replicas_per_arm) + 1;
  return std::max(1, cores - launching);
}

}  // namespace

std::string ArmId(int64_t context, uint64_t seed, bool several_seeds) {
  return several_seeds ? absl::StrCat("n", context, "-s", seed) : absl::StrCat("n", context);
}

// Plan the arms, run the arm pool, conclude (gate, precision check, report).
absl::StatusOr<SweepOutcome> SweepEngine::Run(const SweepConfig& config,
                                              const SweepEngineOptions& options,
                                              const SweepHooks& hooks) {
  RETURN_IF_ERROR(PrepareDir(config, options.dir));
  SweepClock clock(options.dir);
  ASSIGN_OR_RETURN(SweepData data, LoadSweepData(config));
  ASSIGN_OR_RETURN(ResearchDataset dataset, ResearchDataset::Build(data.days, config.horizon,
                                                                    config.label_alpha_bps * 1e-4));
  ASSIGN_OR_RETURN(std::vector<ArmSlot> slots, PlanArms(config, dataset));
  SweepOutcome out = DescribeData(config, data, dataset, slots);
  ASSIGN_OR_RETURN(ArmPoolSetup setup, PoolSetup(config, options, dataset, data, slots));

  const std::string precision_device =
      options.precision_device.empty() ? setup.device : options.precision_device;
  std::optional<EarlyPrecisionCheck> early;
  SweepHooks pool_hooks = hooks;
  if (const int threads = EarlyPrecisionThreads(config, options, setup); threads > 0) {
    // The first seed of the longest N (plan order: by N, then seed).
    const ArmSlot& s = slots[(config.contexts.size() - 1) * config.seeds.size()];
    early.emplace(s.id, [&config, &dataset, &s, &setup, &hooks, precision_device, threads] {
      return CheckArm(config, dataset, s, setup, precision_device, threads, hooks);
    });
    pool_hooks.on_arm = [&hooks, &early](const ArmResult& a) {
      if (hooks.on_arm) hooks.on_arm(a);
      early->ArmFinished(a);
    };
  }
  ArmPoolResult pool = options.executor != nullptr ? options.executor->Run(setup, pool_hooks)
                                                   : RunArmPool(setup, pool_hooks);
  RETURN_IF_ERROR(FirstArmError(slots, pool.errors));
  out.backend = pool.backend_name;
  out.device = setup.device;
  out.arms = std::move(pool.arms);
  FillUnstartedArms(slots, options.dir, &out.arms);
  out.cancelled = !AllDone(out.arms);

  RETURN_IF_ERROR(Judge(config, slots.size(), &out));
  if (out.chosen_arm >= 0 && config.precision_check.enabled) {
    const ArmSlot& chosen = slots[out.chosen_arm];
    std::optional<absl::StatusOr<PrecisionReport>> checked;
    if (early.has_value()) checked = early->Take(chosen.id);
    const bool was_early = checked.has_value();
    if (!was_early) {
      checked = CheckArm(config, dataset, chosen, setup, precision_device, 0, hooks);
    }
    if (absl::IsCancelled(checked->status()) && hooks.Cancelled()) {
      // Cancelled after the last arm: the verdict stands, the check is reported as not run.
      out.precision = PrecisionReport{};
      out.precision.note = "cancelled with the sweep before the check finished";
    } else {
      ASSIGN_OR_RETURN(out.precision, *std::move(checked));
    }
    out.precision.early = was_early;
  }
  out.wall_seconds = clock.total_seconds();
  out.call_seconds = clock.this_call_seconds();
  out.calls = clock.calls();
  RETURN_IF_ERROR(WriteSweepReport(options.dir, options.python, options.plot_script, &out));
  return out;
}

absl::StatusOr<ArmResult> SweepEngine::RunOneArm(const SweepConfig& config,
                                                 const SweepEngineOptions& options,
                                                 int arm_index, const SweepHooks& hooks) {
  ASSIGN_OR_RETURN(SweepData data, LoadSweepData(config));
  ASSIGN_OR_RETURN(ResearchDataset dataset, ResearchDataset::Build(data.days, config.horizon,
                                                                    config.label_alpha_bps * 1e-4));
  ASSIGN_OR_RETURN(std::vector<ArmSlot> slots, PlanArms(config, dataset));
  if (arm_index < 0 || arm_index >= static_cast<int>(slots.size())) {
    return absl::InvalidArgumentError(absl::StrCat("arm index ", arm_index, " is not one of the ",
                                                   slots.size(), " planned arms (0..",
                                                   slots.size() - 1, ")"));
  }
  const std::vector<ArmSlot> one = {slots[arm_index]};
  SweepConfig placed = config;  // the device the caller resolved wins (sweep_engine.h)
  if (options.device == "cpu" || options.device == "cuda") placed.device = options.device;
  ASSIGN_OR_RETURN(ArmPoolSetup setup, PoolSetup(placed, options, dataset, data, one));
  setup.parallel = 1;
  if (options.cpu_threads > 0) setup.threads = options.cpu_threads;
  if (options.process_group != nullptr && options.process_group->world_size() > 1) {
    absl::StatusOr<ArmResult> r = RunArmOnRank(setup, *options.process_group, hooks);
    if (!r.ok())
      return absl::Status(r.status().code(),
                          absl::StrCat("arm ", one[0].id, ": ", r.status().message()));
    return r;
  }
  ArmPoolResult pool = RunArmPool(setup, hooks);
  if (!pool.errors[0].ok()) {
    return absl::Status(pool.errors[0].code(),
                        absl::StrCat("arm ", one[0].id, ": ", pool.errors[0].message()));
  }
  if (pool.arms[0].arm_id.empty()) return absl::CancelledError("cancelled before the arm started");
  return std::move(pool.arms[0]);
}

}  // namespace flashtick
