// WorkQueue: a bounded FIFO of jobs run by a fixed set of worker threads. Model
// compute runs here, not on gRPC's callback threads, so a multi-second full-day
// prediction never stalls health checks or metadata RPCs. The bound turns
// overload into a quick RESOURCE_EXHAUSTED instead of unbounded memory (issue 8);
// issue 6's batcher replaces the FIFO pop with a length-aware batch pop.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace flashtick {

class WorkQueue {
 public:
  // `on_length` (may be empty) observes queued + running jobs after each change.
  WorkQueue(int workers, int max_pending, std::function<void(int64_t)> on_length = {});
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // RESOURCE_EXHAUSTED when max_pending jobs already wait; UNAVAILABLE after
  // Shutdown. On error the job is not run (the caller answers the client).
  absl::Status Submit(std::function<void()> job);
  // Stops accepting jobs, runs those already queued, joins the workers.
  void Shutdown();

 private:
  void WorkerLoop();
  void ReportLength();  // callers hold mu_

  const int max_pending_;
  std::function<void(int64_t)> on_length_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  int64_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace flashtick
