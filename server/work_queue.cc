// Bounded job queue with worker threads and key-wise batching (see work_queue.h).
// A worker that pops a batchable job marks its key as "gathering": other workers
// skip that key's entries, so one batch collects them instead of several small
// ones racing for them; plain jobs and other keys keep flowing to other workers.
#include "server/work_queue.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace flashtick {

WorkQueue::WorkQueue(int workers, int max_pending, std::function<void(int64_t)> on_length,
                     BatchPolicy batch, int reserved_pending, int64_t max_pending_bytes)
    : max_pending_(max_pending),
      reserved_pending_(reserved_pending),
      max_pending_bytes_(max_pending_bytes),
      on_length_(std::move(on_length)),
      batch_(batch) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

WorkQueue::~WorkQueue() { Shutdown(); }

absl::Status WorkQueue::Admit(bool reserved, int64_t bytes) {
  if (stopping_) {
    return absl::UnavailableError("the server is shutting down; retry on another replica");
  }
  const int queued = static_cast<int>(std::count_if(
      jobs_.begin(), jobs_.end(), [reserved](const Entry& e) { return e.reserved == reserved; }));
  if (reserved && queued >= reserved_pending_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tick queue is full (", reserved_pending_, " ticks waiting); retry with backoff"));
  }
  if (!reserved && queued >= max_pending_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "inference queue is full (", max_pending_,
        " requests waiting); retry with backoff or raise --max-queue"));
  }
  if (max_pending_bytes_ > 0 && bytes > 0) {
    int64_t queued_bytes = 0;
    for (const Entry& e : jobs_) queued_bytes += e.job != nullptr ? e.job->bytes : 0;
    if (queued_bytes + bytes > max_pending_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "inference queue holds ", queued_bytes, " bytes of requests; this one (", bytes,
          " bytes) would pass the budget of ", max_pending_bytes_,
          " (--max-queue-mb); retry with backoff or send smaller requests"));
    }
  }
  return absl::OkStatus();
}

absl::Status WorkQueue::Push(Entry entry) {
  const int64_t bytes = entry.job != nullptr ? entry.job->bytes : 0;
  if (absl::Status admitted = Admit(entry.reserved, bytes); !admitted.ok()) return admitted;
  jobs_.push_back(std::move(entry));
  ReportLength();
  cv_.notify_all();  // idle workers and a gathering worker may both be waiting
  return absl::OkStatus();
}

absl::Status WorkQueue::Submit(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry entry;
  entry.run = std::move(job);
  return Push(std::move(entry));
}

absl::Status WorkQueue::SubmitReserved(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry entry;
  entry.run = std::move(job);
  entry.reserved = true;
  return Push(std::move(entry));
}

absl::Status WorkQueue::SubmitBatchable(std::string key, std::shared_ptr<BatchJob> job,
                                        BatchRunner run) {
  std::lock_guard<std::mutex> lock(mu_);
  job->enqueued = absl::Now();
  Entry entry;
  entry.key = key.empty() ? std::string(1, '\0') : std::move(key);  // "" means plain
  entry.job = std::move(job);
  entry.run_batch = std::move(run);
  return Push(std::move(entry));
}

void WorkQueue::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& worker : workers_) worker.join();
  workers_.clear();
}

std::deque<WorkQueue::Entry>::iterator WorkQueue::FindRunnable() {
  return std::find_if(jobs_.begin(), jobs_.end(), [this](const Entry& e) {
    return e.key.empty() || gathering_.count(e.key) == 0;
  });
}

std::vector<std::shared_ptr<BatchJob>> WorkQueue::Gather(std::unique_lock<std::mutex>& lock,
                                                         Entry& first) {
  std::vector<std::shared_ptr<BatchJob>> batch{first.job};
  const size_t max_size =
      batch_.max_delay > absl::ZeroDuration() ? static_cast<size_t>(std::max(1, batch_.max_size))
                                              : 1;
  if (max_size <= 1) return batch;
  // The delay counts from the first job's arrival: a job that already waited
  // behind a busy worker is not held any longer.
  const absl::Time flush_at = first.job->enqueued + batch_.max_delay;
  gathering_.insert(first.key);
  for (;;) {
    for (auto it = jobs_.begin(); it != jobs_.end() && batch.size() < max_size;) {
      if (it->key != first.key) {
        ++it;
        continue;
      }
      batch.push_back(std::move(it->job));
      ++running_;  // queued -> running: the reported length does not change
      it = jobs_.erase(it);
    }
    // No other worker is computing: the device is idle, and holding the batch
    // back for company would only add the delay to its latency. Run what is here.
    if (batch.size() >= max_size || stopping_ || executing_ == 0 || absl::Now() >= flush_at) {
      break;
    }
    // Another batch is running: company that arrives before it ends (or before
    // flush_at) joins this one. A worker ending a job wakes us (WorkerLoop).
    cv_.wait_until(lock, absl::ToChronoTime(flush_at));
  }
  gathering_.erase(first.key);
  cv_.notify_all();  // entries of this key left behind are runnable again
  return batch;
}

void WorkQueue::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    auto it = jobs_.end();
    cv_.wait(lock, [&] {
      it = FindRunnable();
      return it != jobs_.end() || (stopping_ && jobs_.empty());
    });
    if (it == jobs_.end()) return;  // stopping and drained
    Entry entry = std::move(*it);
    jobs_.erase(it);
    ++running_;
    if (entry.key.empty()) {
      ++executing_;
      lock.unlock();
      entry.run();
      lock.lock();
      --running_;
    } else {
      std::vector<std::shared_ptr<BatchJob>> batch = Gather(lock, entry);
      const int64_t size = static_cast<int64_t>(batch.size());
      ++executing_;
      lock.unlock();
      entry.run_batch(std::move(batch));
      lock.lock();
      running_ -= size;
    }
    --executing_;
    ReportLength();
    // A worker gathering a batch waits only while another one computes.
    cv_.notify_all();
  }
}

void WorkQueue::ReportLength() {
  if (on_length_) on_length_(static_cast<int64_t>(jobs_.size()) + running_);
}

}  // namespace flashtick
