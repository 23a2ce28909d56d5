// SweepEngine (see sweep_engine.h).
#include "research/sweep/sweep_engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <exception>
#include <mutex>
#include <new>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/file_io.h"
#include "research/report/sweep_report.h"
#include "research/split/research_dataset.h"
#include "research/sweep/arm_plan.h"
#include "research/sweep/day_predictor.h"
#include "research/sweep/sweep_data.h"
#include "research/parallel/gpu_scheduler.h"
#include "kernels/backend.h"

namespace flashtick {
namespace {

struct ArmSlot {
  int64_t context = 0;
  uint64_t seed = 0;
  std::string id;
  ArmPlan plan;
};

// Remaining time from the measured seconds per step of the arms that ran; arms
// not started yet are assumed to step as fast as the last measured one (they
// take the same tokens per step, so this underestimates longer N when attention
// dominates).
class EtaClock {
 public:
  explicit EtaClock(const std::vector<ArmSlot>& arms) {
    for (const ArmSlot& a : arms) {
      total_.push_back(a.plan.total_steps);
      done_.push_back(0);
      rate_.push_back(0);
    }
  }
  double Update(int arm, int64_t step, double step_seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    done_[arm] = step;
    if (step_seconds > 0) {
      rate_[arm] = rate_[arm] > 0 ? 0.9 * rate_[arm] + 0.1 * step_seconds : step_seconds;
      last_rate_ = rate_[arm];
    }
    if (last_rate_ <= 0) return -1;
    double eta = 0;
    for (size_t i = 0; i < total_.size(); ++i) {
      eta += (total_[i] - std::min(done_[i], total_[i])) * (rate_[i] > 0 ? rate_[i] : last_rate_);
    }
    return eta;
  }

 private:
  std::mutex mu_;
  std::vector<int64_t> total_, done_;
  std::vector<double> rate_;
  double last_rate_ = 0;
};

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

}  // namespace

std::string ArmId(int64_t context, uint64_t seed, bool several_seeds) {
  return several_seeds ? absl::StrCat("n", context, "-s", seed) : absl::StrCat("n", context);
}

absl::StatusOr<SweepOutcome> SweepEngine::Run(const SweepConfig& config,
                                              const SweepEngineOptions& options,
                                              const SweepHooks& hooks) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(MakeDirs(options.dir + "/arms"));
  // A process killed mid-write (kill -9 during a sweep) leaves a temporary file beside
  // the state, report or checkpoint it was replacing; a resumed sweep clears them.
  for (const std::string& path : RemoveInterruptedAtomicWrites(options.dir)) {
    std::fprintf(stderr, "sweep %s: removed %s, left by a write that was interrupted\n",
                 options.dir.c_str(), path.c_str());
  }
  RETURN_IF_ERROR(WriteFileAtomic(options.dir + "/config.json", SweepConfigToJson(config)));
  ASSIGN_OR_RETURN(SweepData data, LoadSweepData(config));
  ASSIGN_OR_RETURN(ResearchDataset dataset, ResearchDataset::Build(data.days, config.horizon,
                                                                    config.label_alpha_bps * 1e-4));

  SweepOutcome out;
  out.config = config;
  out.data_description = data.description;
  out.days = dataset.num_days();
  out.steps_per_day = dataset.context().day_steps(0);
  if (config.data.csv) out.cleaning = data.cleaning.ToString();
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
  for (int d : slots.front().plan.test_days) out.test_dates.push_back(dataset.context().date(d));

  const std::string device = config.device == "auto" ? options.device : config.device;
  const int threads = config.cpu_threads > 0 ? config.cpu_threads : options.cpu_threads;
  const int parallel = std::min<int>(config.max_parallel_arms, static_cast<int>(slots.size()));
  out.arms.resize(slots.size());
  std::vector<absl::Status> errors(slots.size());
  std::atomic<bool> stop{false};
  std::atomic<int> next{0};
  EtaClock eta(slots);
  std::mutex hook_mu;  // hooks see one event at a time
  std::string backend_name;
  const int visible_gpus = device == "cuda" || device == "auto" ? DeviceCount(DeviceKind::kCuda) : 0;
  const int gpus = options.gpus >= 0 ? std::min(options.gpus, visible_gpus) : visible_gpus;
  if (device == "cuda" && options.gpus == 0)
    return absl::InvalidArgumentError("device cuda with gpus = 0: no GPU to place arms on");
  GpuScheduler scheduler(gpus, config.arms_per_gpu);

  const int replicas = config.replicas_per_arm;
  auto worker = [&]() {
    BackendOptions bo;
    bo.threads = threads > 0 ? std::max(1, threads / (parallel * replicas)) : 0;
    // This worker's backends, one per replica of the arm, reused while the arm's
    // GPUs stay the same (−1: a CPU backend).
    std::vector<std::unique_ptr<Backend>> backends;
    absl::Status backend_error = absl::FailedPreconditionError("no backend yet");
    std::vector<int> backend_gpus;
    for (int i = next++; i < static_cast<int>(slots.size()); i = next++) {
      auto placed = scheduler.Acquire(replicas, &stop);
      if (!placed.ok()) {
        if (!stop) errors[i] = placed.status();
        stop = true;
        continue;
      }
      const std::vector<int> want = placed->empty() ? std::vector<int>(replicas, -1) : *placed;
      if (want != backend_gpus) {
        backends.clear();
        backend_error = absl::OkStatus();
        for (int gpu : want) {
          bo.device_index = gpu < 0 ? 0 : gpu;
          auto be = CreateBackend(gpu >= 0 ? "cuda" : (device == "auto" ? "cpu" : device), bo);
          if (!be.ok()) {
            backend_error = be.status();
            break;
          }
          backends.push_back(*std::move(be));
        }
        backend_gpus = want;
      }
      absl::StatusOr<Backend*> backend =
          backend_error.ok() ? absl::StatusOr<Backend*>(backends.front().get()) : backend_error;
      auto place = [&](bool on) {
        ArmPlacement pl{i, slots[i].id, *placed, on, scheduler.busy(), scheduler.total()};
        std::lock_guard<std::mutex> lock(hook_mu);
        if (hooks.on_placement) hooks.on_placement(pl);
      };
      place(true);
      struct Releaser {  // the GPU goes back however the arm ends
        std::function<void()> fn;
        ~Releaser() { fn(); }
      } release{[&] {
        scheduler.Release(*placed);
        place(false);
      }};
      if (!backend.ok()) {
        errors[i] = backend.status();
        stop = true;
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(hook_mu);
        backend_name = (*backend)->name();
      }
      ArmInputs in{&config, &dataset, &data, &slots[i].plan, i,
                   slots[i].id, slots[i].seed, options.dir + "/arms/" + slots[i].id,
                   *backend, {}, {}};
      if (replicas > 1) {  // a data-parallel arm (research/parallel/data_parallel_trainer.h)
        for (auto& be : backends) in.replicas.push_back(be.get());
        in.gpus = *placed;
      }
      ArmHooks ah;
      // The caller's cancel is read directly, not only when the arm reports progress: a cancel
      // that lands while an arm scores its fold must stop the next fold's first step.
      ah.stop_requested = [&] {
        if (hooks.cancel != nullptr && hooks.cancel->load()) stop = true;
        return stop.load();
      };
      ah.on_progress = [&](const ArmProgress& p) {
        if (hooks.cancel != nullptr && hooks.cancel->load()) stop = true;
        SweepEvent e{p, eta.Update(p.arm_index, p.step, p.step_seconds)};
        std::lock_guard<std::mutex> lock(hook_mu);
        if (hooks.on_progress) hooks.on_progress(e);
      };
      if (stop) break;
      // An exception must not leave this thread (std::terminate would end the
      // whole process, the server's included): it fails the arm like any error.
      absl::StatusOr<ArmResult> r = absl::InternalError("arm did not run");
      try {
        r = ArmRunner::Run(in, ah);
      } catch (const std::bad_alloc&) {
        r = absl::ResourceExhaustedError("out of memory (std::bad_alloc) while the arm ran");
      } catch (const std::exception& e) {
        r = absl::InternalError(absl::StrCat("the arm threw: ", e.what()));
      }
      if (!r.ok()) {
        errors[i] = r.status();
        stop = true;
        break;
      }
      out.arms[i] = *std::move(r);
      std::lock_guard<std::mutex> lock(hook_mu);
      if (hooks.on_arm) hooks.on_arm(out.arms[i]);
    }
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < parallel; ++w) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!errors[i].ok()) {
      return absl::Status(errors[i].code(),
                          absl::StrCat("arm ", slots[i].id, ": ", errors[i].message()));
    }
  }
  out.backend = backend_name;
  out.device = device;
  // Arms that never started (cancelled before their turn) keep what is on disk.
  for (size_t i = 0; i < slots.size(); ++i) {
    if (out.arms[i].arm_id.empty()) {
      auto saved = ArmRunner::LoadState(options.dir + "/arms/" + slots[i].id);
      if (saved.ok()) {
        out.arms[i] = *std::move(saved);
      } else {
        out.arms[i].arm_id = slots[i].id;
        out.arms[i].context = slots[i].context;
        out.arms[i].seed = slots[i].seed;
        out.arms[i].total_steps = slots[i].plan.total_steps;
        out.arms[i].folds = static_cast<int>(slots[i].plan.folds.size());
      }
    }
  }
  bool all_done = true;
  for (const ArmResult& a : out.arms) all_done &= a.state == ArmState::kDone;
  out.cancelled = !all_done;

  if (all_done && slots.size() >= 2 && config.contexts.size() >= 2) {
    ASSIGN_OR_RETURN(std::vector<ArmOutcome> outcomes, Outcomes(config, out.arms));
    auto verdict = EvaluateGate(outcomes, config.gates);
    if (verdict.ok()) {
      out.verdict = *verdict;
      const int n_index = verdict->best_arm >= 0 ? verdict->best_arm : verdict->longest_arm;
      out.chosen_arm = n_index * static_cast<int>(config.seeds.size());
    } else {
      out.verdict_error = std::string(verdict.status().message());
    }
  } else if (!all_done) {
    out.verdict_error = "the sweep was cancelled before every arm finished; no verdict";
  } else {
    out.verdict_error = "a verdict needs at least two context lengths";
  }

  if (out.chosen_arm >= 0 && config.precision_check.enabled) {
    const ArmSlot& s = slots[out.chosen_arm];
    const int day = s.plan.test_days.back();
    ASSIGN_OR_RETURN(FoldLabels labels, dataset.LabelFold(s.plan.folds.back().fold));
    ASSIGN_OR_RETURN(std::vector<float> features, ArmFeatures(dataset, s.plan));
    BackendOptions bo;
    bo.threads = threads;
    ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(device, bo));
    std::vector<EvalWindow> windows = PlanDayWindows(dataset.context().day_offset(day),
                                                     labels.classes[day], s.context,
                                                     s.plan.eval_stride);
    ASSIGN_OR_RETURN(out.precision,
                     RunPrecisionCheck(options.dir + "/arms/" + s.id + "/model", backend.get(),
                                       features, std::move(windows), s.context, s.plan.batch,
                                       config.precision_check.max_windows));
    out.precision.arm_id = s.id;
    out.precision.date = dataset.context().date(day);
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RETURN_IF_ERROR(WriteSweepReport(options.dir, options.python, options.plot_script, &out));
  return out;
}

}  // namespace flashtick
