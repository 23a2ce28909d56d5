// WorkQueue: a bounded FIFO of jobs run by a fixed set of worker threads. Model
// compute runs here, not on gRPC's callback threads, so a multi-second full-day
// prediction never stalls health checks or metadata RPCs. The bound turns
// overload into a quick RESOURCE_EXHAUSTED instead of unbounded memory (docs/reliability.md).
// Batching (docs/serving.md): a job submitted with a batch key is popped together
// with the queued jobs of the same key, up to max_size. The worker waits for more
// (until the first job has waited max_delay, or the batch is full) ONLY while
// another worker is computing: then the device is busy anyway and a job that
// joins costs nothing extra. When no other job runs, the batch goes at once with
// what is queued, so a lone request on an idle server never pays the delay, and a
// busy server batches what piled up behind the running forward. With one worker
// (the default) the delay therefore never applies; it matters with --workers > 1.
// Triton's dynamic batcher differs: with max_queue_delay_microseconds set, its
// scheduler holds a batch smaller than the preferred/max size for up to that
// delay even when a model instance is free (its documentation presents the delay
// as a latency-for-throughput trade; the default delay is 0, i.e. no wait). We
// keep the delay for the case where waiting is free and drop it where it is not
// (https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/batcher.html).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace flashtick {

// A job that may run together with others of the same batch key; the caller
// subclasses it with what its runner needs.
struct BatchJob {
  virtual ~BatchJob() = default;
  absl::Time enqueued;  // set by WorkQueue::SubmitBatchable
  int64_t bytes = 0;    // memory the job holds while queued (the caller's count)
};

// How jobs of one key are merged. max_delay ≤ 0 or max_size ≤ 1: never (each
// batchable job runs alone, in FIFO order like any other job).
struct BatchPolicy {
  absl::Duration max_delay = absl::ZeroDuration();
  int max_size = 1;
};

class WorkQueue {
 public:
  // Runs a batch: jobs of one key in arrival order (at least one).
  using BatchRunner = std::function<void(std::vector<std::shared_ptr<BatchJob>>)>;

  // `on_length` (may be empty) observes queued + running jobs after each change
  // (a batch counts as its number of jobs).
  // reserved_pending: room kept for SubmitReserved beside the max_pending others
  // may fill, so a flood of requests cannot refuse a reserved job (docs/serving.md:
  // a tick stream has at most one tick in flight, so --max-streams of room means a
  // stream's tick is never refused for a full queue).
  WorkQueue(int workers, int max_pending, std::function<void(int64_t)> on_length = {},
            BatchPolicy batch = {}, int reserved_pending = 0, int64_t max_pending_bytes = 0);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // RESOURCE_EXHAUSTED when max_pending jobs already wait; UNAVAILABLE after
  // Shutdown. On error the job is not run (the caller answers the client).
  absl::Status Submit(std::function<void()> job);
  // As Submit, counted against reserved_pending instead of max_pending.
  absl::Status SubmitReserved(std::function<void()> job);
  // As Submit; `run` receives `job` with the queued jobs of the same `key`.
  // RESOURCE_EXHAUSTED too when the queued batchable jobs' bytes plus job->bytes
  // would pass max_pending_bytes (> 0): a count of requests alone let 64 requests
  // of 64 MiB, each held twice, queue 8 GiB. All
  // jobs of a key must be submitted with equivalent runners (the first one's runs).
  absl::Status SubmitBatchable(std::string key, std::shared_ptr<BatchJob> job, BatchRunner run);
  // Stops accepting jobs, runs those already queued, joins the workers.
  void Shutdown();

 private:
  struct Entry {
    std::function<void()> run;             // a plain job, or
    std::string key;                       // a batchable one (key non-empty)
    std::shared_ptr<BatchJob> job;
    BatchRunner run_batch;
    bool reserved = false;                 // counted against reserved_pending_
  };

  absl::Status Admit(bool reserved, int64_t bytes = 0);  // callers hold mu_
  absl::Status Push(Entry entry);     // Admit + enqueue; callers hold mu_
  void WorkerLoop();
  // First entry a worker may take: plain, or of a key no worker is gathering.
  std::deque<Entry>::iterator FindRunnable();  // callers hold mu_
  // Waits for and removes the jobs that join `first`'s batch.
  std::vector<std::shared_ptr<BatchJob>> Gather(std::unique_lock<std::mutex>& lock,
                                                Entry& first);
  void ReportLength();  // callers hold mu_

  const int max_pending_;
  const int reserved_pending_;
  const int64_t max_pending_bytes_;
  std::function<void(int64_t)> on_length_;
  const BatchPolicy batch_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> jobs_;
  std::set<std::string> gathering_;  // keys a worker is collecting a batch of
  int64_t running_ = 0;    // jobs popped by workers (gathering or computing)
  int executing_ = 0;      // workers inside a job or batch runner
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace flashtick
