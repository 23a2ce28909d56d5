// CollectiveWatchdog: turns a collective that never completes into an error instead of
// a hang, for NCCL communicators of a multi-process job (docs/multi_gpu.md). An NCCL
// collective whose peer died waits forever inside a kernel, and so does the host call
// that waits for it; nothing in the call itself times out. PyTorch's process groups
// solve this with a watchdog thread per communicator (its NCCL "watchdog" and async
// error handling); this is the same idea, small:
// a thread polls, every poll_seconds, (1) the communicator's own asynchronous error
// (ncclCommGetAsyncError: NCCL noticed a peer's connection close) and (2) whether the
// last launched collective is still pending more than timeout_seconds after its launch.
// Either fires `abort` once (ncclCommAbort: every kernel and host wait on the
// communicator returns) and status() says why, so the caller's next call fails with a
// clear error and the process can exit, which the surviving ranks see in turn.
// The probes are callbacks so the logic is tested on the CPU with fakes
// (tests/parallel/collective_watchdog_test.cc).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"

namespace flashtick {

struct CollectiveProbes {
  // True while the last launched collective has not completed (cudaEventQuery not ready).
  std::function<bool()> pending;
  // An error the communicator found on its own (OK while it has none); may be empty.
  std::function<absl::Status()> async_error;
  // Aborts the communicator; called at most once, from the watchdog's thread.
  std::function<void()> abort;
};

class CollectiveWatchdog {
 public:
  // `what` names the communicator in the error ("NCCL rank 1 of 2").
  CollectiveWatchdog(CollectiveProbes probes, std::string what, double timeout_seconds,
                     double poll_seconds = 0.1);
  ~CollectiveWatchdog();  // stops and joins the thread; never aborts on its own
  CollectiveWatchdog(const CollectiveWatchdog&) = delete;
  CollectiveWatchdog& operator=(const CollectiveWatchdog&) = delete;

  // A collective was launched now: the timeout counts from here while it is pending.
  void Launched();
  // OK, or why the communicator was aborted (Unavailable: its async error;
  // DeadlineExceeded: a collective pending past the timeout).
  absl::Status status() const;
  bool fired() const { return fired_.load(); }

 private:
  void Loop();
  void Fire(absl::Status why);

  using Clock = std::chrono::steady_clock;
  const CollectiveProbes probes_;
  const std::string what_;
  const Clock::duration timeout_, poll_;
  std::atomic<Clock::rep> launched_at_{0};  // Clock ticks of the last Launched(); 0: none yet
  std::atomic<bool> fired_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;      // guarded by mu_
  absl::Status status_;    // guarded by mu_
  std::thread thread_;     // last: starts after every member above is ready
};

}  // namespace flashtick
