// ExperimentRunner: the experiment queue. SubmitSweep stores an experiment and
// enqueues its id here, so the RPC returns at once; `workers` threads (default 1:
// one sweep at a time, each arm owning the device) pop ids in order and run the
// sweep engine (train/sweep/sweep_engine.h) in the experiment's directory.
// On start, experiments the store holds as QUEUED or RUNNING are queued again; a
// RUNNING one resumes its unfinished arms from their checkpoints. Cancel removes a
// queued experiment or stops a running one between two steps (finished arms and
// their results are kept, and a report of them is written). Shutdown stops running
// sweeps the same way but leaves them RUNNING in the store, to resume on restart.
// Progress goes to the ProgressHub (watchers), the store (throttled) and metrics.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
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
#include "train/sweep/sweep_engine.h"

namespace flashtick {

struct RunnerOptions {
  int workers = 1;
  std::string device = "cpu";  // the server's --device, for configs that say "auto"
  int cpu_threads = 0;
  std::string python = "python3";
  std::string plot_script;
  double store_every_seconds = 2.0;    // arm progress written to the store at most this often
  double publish_every_seconds = 0.5;  // training progress sent to watchers at most this often
};

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
  void RunOne(const std::string& id);
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
