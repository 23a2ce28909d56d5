// Bounded job queue with worker threads (see work_queue.h).
#include "server/work_queue.h"

#include "absl/strings/str_cat.h"

namespace flashtick {

WorkQueue::WorkQueue(int workers, int max_pending, std::function<void(int64_t)> on_length)
    : max_pending_(max_pending), on_length_(std::move(on_length)) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

WorkQueue::~WorkQueue() { Shutdown(); }

absl::Status WorkQueue::Submit(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) {
    return absl::UnavailableError("the server is shutting down; retry on another replica");
  }
  if (static_cast<int>(jobs_.size()) >= max_pending_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "inference queue is full (", max_pending_,
        " requests waiting); retry with backoff or raise --max-queue"));
  }
  jobs_.push_back(std::move(job));
  ReportLength();
  cv_.notify_one();
  return absl::OkStatus();
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

void WorkQueue::WorkerLoop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    job();
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    ReportLength();
  }
}

void WorkQueue::ReportLength() {
  if (on_length_) on_length_(static_cast<int64_t>(jobs_.size()) + running_);
}

}  // namespace flashtick
