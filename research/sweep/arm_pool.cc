// The sweep's arm pool (see arm_pool.h).
#include "research/sweep/arm_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/backend.h"
#include "research/parallel/gpu_scheduler.h"
#include "research/sweep/arm_runner.h"

namespace flashtick {
namespace {

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

// One worker's backends, one per replica of the arm it runs. Creating a backend
// costs (a CUDA context, workspaces), so they are kept while the arm's GPUs stay
// the same and rebuilt only when the scheduler places the next arm elsewhere.
class WorkerBackends {
 public:
  WorkerBackends(std::string device, int replicas, int threads, bool deterministic)
      : device_(std::move(device)), replicas_(replicas) {
    options_.threads = threads;
    options_.deterministic = deterministic;  // training.deterministic
  }

  // The first replica's backend for an arm placed on `placed` (empty: the CPU), or
  // why one could not be created.
  absl::StatusOr<Backend*> For(const std::vector<int>& placed) {
    // −1: a CPU backend for each replica.
    const std::vector<int> want = placed.empty() ? std::vector<int>(replicas_, -1) : placed;
    if (want != gpus_) Rebuild(want);
    if (!error_.ok()) return error_;
    return backends_.front().get();
  }

  std::vector<Backend*> All() const {
    std::vector<Backend*> all;
    for (const auto& be : backends_) all.push_back(be.get());
    return all;
  }

 private:
  void Rebuild(const std::vector<int>& want) {
    backends_.clear();
    error_ = absl::OkStatus();
    for (int gpu : want) {
      options_.device_index = gpu < 0 ? 0 : gpu;
      // Off a GPU, "auto" means the CPU; otherwise the device the sweep asked for.
      auto be = CreateBackend(gpu >= 0 ? "cuda" : (device_ == "auto" ? "cpu" : device_), options_);
      if (!be.ok()) {
        error_ = be.status();
        break;
      }
      backends_.push_back(*std::move(be));
    }
    gpus_ = want;
  }

  const std::string device_;
  const int replicas_;
  BackendOptions options_;
  std::vector<std::unique_ptr<Backend>> backends_;
  absl::Status error_ = absl::FailedPreconditionError("no backend yet");
  std::vector<int> gpus_;  // what backends_ were built for
};

// Trains one arm. An exception must not leave a worker thread (std::terminate would
// end the whole process, the server's included): it fails the arm like any error.
absl::StatusOr<ArmResult> RunArmCatching(const ArmInputs& in, const ArmHooks& hooks) {
  try {
    return ArmRunner::Run(in, hooks);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory (std::bad_alloc) while the arm ran");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the arm threw: ", e.what()));
  }
}

// The state the workers share. Workers take slots in order_ (ArmTakeOrder) from `next_`;
// `stop_` is set by the first failure or the caller's cancel and ends every worker
// between steps.
class ArmPool {
 public:
  ArmPool(const ArmPoolSetup& setup, const SweepHooks& hooks)
      : setup_(setup),
        slots_(*setup.slots),
        hooks_(hooks),
        replicas_(setup.config->replicas_per_arm),
        order_(ArmTakeOrder(slots_, setup.parallel)),
        eta_(slots_),
        scheduler_(setup.gpus, setup.config->arms_per_gpu) {
    result_.arms.resize(slots_.size());
    result_.errors.resize(slots_.size());
  }

  ArmPoolResult Run() {
    std::vector<std::thread> pool;
    for (int w = 0; w < setup_.parallel; ++w) pool.emplace_back([this] { Worker(); });
    for (std::thread& t : pool) t.join();
    return std::move(result_);
  }

 private:
  enum class Next { kArm, kStopWorker };

  void Worker() {
    // The arms running side by side share the sweep's CPU threads.
    const int threads =
        setup_.threads > 0 ? std::max(1, setup_.threads / (setup_.parallel * replicas_)) : 0;
    WorkerBackends backends(setup_.device, replicas_, threads,
                            setup_.config->training.deterministic);
    for (int k = next_++; k < static_cast<int>(order_.size()); k = next_++) {
      if (RunSlot(order_[k], backends) == Next::kStopWorker) break;
    }
  }

  // Places arm i, trains it, and records its result or its error.
  Next RunSlot(int i, WorkerBackends& backends) {
    absl::StatusOr<std::vector<int>> placed = scheduler_.Acquire(replicas_, &stop_);
    if (!placed.ok()) {
      // A cancelled wait is not the arm's error; either way every later Acquire of
      // every worker returns at once, so the workers drain the remaining slots.
      if (!stop_) result_.errors[i] = placed.status();
      stop_ = true;
      return Next::kArm;
    }
    absl::StatusOr<Backend*> backend = backends.For(*placed);
    AnnouncePlacement(i, *placed, /*placed=*/true);
    struct Releaser {  // the GPU goes back however the arm ends
      std::function<void()> fn;
      ~Releaser() { fn(); }
    } release{[&] {
      scheduler_.Release(*placed);
      AnnouncePlacement(i, *placed, /*placed=*/false);
    }};
    if (!backend.ok()) {
      result_.errors[i] = backend.status();
      stop_ = true;
      return Next::kArm;
    }
    {
      std::lock_guard<std::mutex> lock(hook_mu_);
      result_.backend_name = (*backend)->name();
    }
    if (stop_) return Next::kStopWorker;
    absl::StatusOr<ArmResult> r =
        RunArmCatching(InputsFor(i, *backend, backends, *placed), ArmHooksFor());
    if (!r.ok()) {
      result_.errors[i] = r.status();
      stop_ = true;
      return Next::kStopWorker;
    }
    result_.arms[i] = *std::move(r);
    // Released (scope exit) only after this lock is dropped: the release announces too.
    std::lock_guard<std::mutex> lock(hook_mu_);
    if (hooks_.on_arm) hooks_.on_arm(result_.arms[i]);
    return Next::kArm;
  }

  ArmInputs InputsFor(int i, Backend* backend, const WorkerBackends& backends,
                      const std::vector<int>& placed) const {
    const ArmSlot& s = slots_[i];
    ArmInputs in{setup_.config, setup_.dataset, setup_.data, &s.plan, i, s.id, s.seed,
                 setup_.dir + "/arms/" + s.id, backend, {}, {}};
    if (replicas_ > 1) {  // a data-parallel arm (research/parallel/data_parallel_trainer.h)
      in.replicas = backends.All();
      in.gpus = placed;
    }
    return in;
  }

  ArmHooks ArmHooksFor() {
    ArmHooks ah;
    // The caller's cancel is read directly, not only when the arm reports progress: a cancel
    // that lands while an arm scores its fold must stop the next fold's first step.
    ah.stop_requested = [this] {
      if (hooks_.Cancelled()) stop_ = true;
      return stop_.load();
    };
    ah.on_progress = [this](const ArmProgress& p) {
      if (hooks_.Cancelled()) stop_ = true;
      SweepEvent e{p, eta_.Update(p.arm_index, p.step, p.step_seconds)};
      std::lock_guard<std::mutex> lock(hook_mu_);
      if (hooks_.on_progress) hooks_.on_progress(e);
    };
    return ah;
  }

  void AnnouncePlacement(int i, const std::vector<int>& gpus, bool placed) {
    ArmPlacement pl{i, slots_[i].id, gpus, placed, scheduler_.busy(), scheduler_.total()};
    std::lock_guard<std::mutex> lock(hook_mu_);
    if (hooks_.on_placement) hooks_.on_placement(pl);
  }

  const ArmPoolSetup& setup_;
  const std::vector<ArmSlot>& slots_;
  const SweepHooks& hooks_;
  const int replicas_;
  const std::vector<int> order_;  // slot indices in the order workers take them
  EtaClock eta_;
  GpuScheduler scheduler_;
  std::atomic<bool> stop_{false};
  std::atomic<int> next_{0};
  std::mutex hook_mu_;  // hooks see one event at a time; also guards backend_name
  ArmPoolResult result_;
};

}  // namespace

std::vector<int> ArmTakeOrder(const std::vector<ArmSlot>& slots, int parallel) {
  std::vector<int> order(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) order[i] = static_cast<int>(i);
  if (parallel > 1) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return slots[a].context > slots[b].context; });
  }
  return order;
}

ArmPoolResult RunArmPool(const ArmPoolSetup& setup, const SweepHooks& hooks) {
  return ArmPool(setup, hooks).Run();
}

}  // namespace flashtick
