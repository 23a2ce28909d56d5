// GpuScheduler: lowest-free-index placement with blocking waits
// (train/parallel/gpu_scheduler.h).
#include "train/parallel/gpu_scheduler.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::StatusOr<std::vector<int>> GpuScheduler::Acquire(int count,
                                                       const std::atomic<bool>* cancel) {
  if (busy_.empty()) return std::vector<int>();  // CPU: nothing to place
  if (count < 1 || count > total())
    return absl::InvalidArgumentError(absl::StrCat(
        "an arm asked for ", count, " GPUs; this host has ", total()));
  std::unique_lock<std::mutex> lock(mu_);
  auto free_count = [&] {
    int n = 0;
    for (bool b : busy_) n += !b;
    return n;
  };
  // Poll the cancel flag: it is set by other threads without notifying us.
  constexpr auto kCancelPoll = std::chrono::milliseconds(100);
  while (free_count() < count) {
    if (cancel != nullptr && cancel->load())
      return absl::CancelledError("cancelled while waiting for a free GPU");
    cv_.wait_for(lock, kCancelPoll);
  }
  std::vector<int> got;
  for (int g = 0; g < total() && static_cast<int>(got.size()) < count; ++g) {
    if (!busy_[g]) {
      busy_[g] = true;
      got.push_back(g);
    }
  }
  return got;
}

void GpuScheduler::Release(const std::vector<int>& gpus) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int g : gpus)
      if (g >= 0 && g < total()) busy_[g] = false;
  }
  cv_.notify_all();
}

int GpuScheduler::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (bool b : busy_) n += b;
  return n;
}

}  // namespace flashtick
