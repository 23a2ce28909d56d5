// ExperimentRunner: the experiment queue. SubmitSweep stores an experiment and
// enqueues its id here, so the RPC returns at once; `workers` threads (default 1:
// one sweep at a time, each arm owning the device) pop ids in order and run the
// sweep engine (research/sweep/sweep_engine.h) in the experiment's directory.
// On start, experiments the store holds as QUEUED or RUNNING are queued again; a
// RUNNING one resumes its unfinished arms from their checkpoints. Cancel removes a
// queued experiment or stops a running one between two steps (finished arms and
// their results are kept, and a report of them is written). Shutdown stops running
// sweeps the same way but leaves them RUNNING in the store, to resume on restart.
// Progress goes to the ProgressHub (watchers), the store (throttled) and metrics;
// an experiment's per-arm metric series are dropped when it ends.
// Robustness (docs/security.md): every sweep runs inside an exception boundary (a
// std::bad_alloc or any other exception marks the experiment FAILED instead of
// ending the process); each start is counted in <dir>/start_attempts and the count
// cleared when the run ends cleanly, so an experiment that took the process down
// max_resume_attempts times is marked FAILED at the next start instead of resumed
// into the same crash; and a config's threads and parallelism are clamped to the
// server's --threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "server/experiments/experiment_store.h"
#include "server/experiments/progress_hub.h"
#include "server/metrics/metrics.h"
#include "research/sweep/arm_executor.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {

struct RunnerOptions {
  int workers = 1;
  std::string device = "cpu";  // the server's --device, for configs that say "auto"
  int cpu_threads = 0;
  std::string python = "python3";
  std::string plot_script;
  double store_every_seconds = 2.0;    // arm progress written to the store at most this often
  double publish_every_seconds = 0.5;  // training progress sent to watchers at most this often
  int max_resume_attempts = 3;         // starts without a clean end before FAILED
  // Where arms train (research/sweep/arm_executor.h); null: threads of this process.
  // A remote executor (Kubernetes) runs arms elsewhere, so configs are not clamped to
  // this server's --threads. Outlives the runner.
  ArmExecutor* arm_executor = nullptr;
  // Runs one sweep; SweepEngine::Run unless a test substitutes it.
  std::function<absl::StatusOr<SweepOutcome>(const SweepConfig&, const SweepEngineOptions&,
                                             const SweepHooks&)>
      run_sweep;
  // Test seam: called by a worker after it took `id` off the queue and read its
  // record, before it lists it as running: the window where a cancel finds the
  // experiment neither queued nor running and must still not be lost.
  std::function<void(const std::string& id)> before_register;
  // Test seam: called first thing in Start(), on its caller's thread, before any
  // unfinished experiment is requeued or any worker runs.
  std::function<void()> on_start;
};

// Clamps a configuration's CPU parallelism to the server's thread budget
// (--threads; 0: the machine's cores): max_parallel_arms × replicas_per_arm ×
// cpu_threads stays within max(budget, replicas_per_arm). replicas_per_arm itself
// is kept (it must divide every batch); each replica then gets one thread.
// Returns a note of what changed ("" when nothing did).
std::string ClampToServerThreads(SweepConfig* config, int server_threads);

class ExperimentRunner {
 public:
  ExperimentRunner(ExperimentStore* store, ProgressHub* hub, Metrics* metrics,
                   RunnerOptions options);
  ~ExperimentRunner();

  // Requeues the store's unfinished experiments and starts the workers.
  absl::Status Start();
  void Enqueue(const std::string& id);
  // Cancels a queued or running experiment (a finished one is left as it is).
  absl::Status Cancel(const std::string& id);
  // Stops the workers; running sweeps stop between steps and stay RUNNING.
  void Shutdown();
  // Refreshes flashtick_experiments{state} from the store.
  void UpdateStateGauge();

 private:
  struct Running {
    std::atomic<bool> cancel{false};
    bool user_cancel = false;
  };
  void WorkerLoop();
  // Runs one experiment from start to end state: register, start (or fail one that
  // keeps crashing the server), sweep, store the outcome, announce it.
  void RunOne(const std::string& id);
  // Lists the experiment as running, with a cancel already requested carried over;
  // null when the runner is shutting down.
  std::shared_ptr<Running> Register(const ExperimentRecord& record);
  void Unregister(const std::string& id);
  // Marks FAILED an experiment started `attempts` times without a clean end.
  void FailRepeatedCrash(const ExperimentRecord& record, int attempts);
  // RUNNING in the store, to watchers and in the log ("started" or "resumed ...").
  void MarkStarted(ExperimentRecord* record);
  SweepEngineOptions EngineOptions(const std::string& dir) const;
  absl::StatusOr<SweepOutcome> RunSweep(const ExperimentRecord& record, Running* run);
  // RunSweep inside the exception boundary: any exception becomes an error status.
  absl::StatusOr<SweepOutcome> RunSweepCatching(const ExperimentRecord& record, Running* run);
  // Stores the end state and the final arm rows; returns the end message.
  std::string StoreOutcome(const std::string& id, const absl::StatusOr<SweepOutcome>& outcome,
                           bool user_cancel);
  // Drops the experiment's per-arm metric series.
  void RetireArmMetrics(const std::string& id);
  // Logs the end message and sends the final record to watchers.
  void AnnounceEnd(const std::string& id, const std::string& message);
  void PublishState(const ExperimentRecord& r, const std::string& message);

  ExperimentStore* store_;
  ProgressHub* hub_;
  Metrics* metrics_;
  const RunnerOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::map<std::string, std::shared_ptr<Running>> running_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace flashtick
