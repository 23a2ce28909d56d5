// GpuScheduler: least-loaded, lowest-index placement with blocking waits
// (research/parallel/gpu_scheduler.h).
#include "research/parallel/gpu_scheduler.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::StatusOr<std::vector<int>> GpuScheduler::Acquire(int count,
                                                       const std::atomic<bool>* cancel) {
  if (load_.empty()) return std::vector<int>();  // CPU: nothing to place
  if (count < 1 || count > total())
    return absl::InvalidArgumentError(absl::StrCat(
        "an arm asked for ", count, " GPUs; this host has ", total()));
  std::unique_lock<std::mutex> lock(mu_);
  auto open_count = [&] {
    int n = 0;
    for (int l : load_) n += l < arms_per_gpu_;
    return n;
  };
  // Poll the cancel flag: it is set by other threads without notifying us.
  constexpr auto kCancelPoll = std::chrono::milliseconds(100);
  while (open_count() < count) {
    if (cancel != nullptr && cancel->load())
      return absl::CancelledError("cancelled while waiting for a free GPU");
    cv_.wait_for(lock, kCancelPoll);
  }
  // The least-loaded GPUs first (ties: lowest index), so arms spread before they share.
  std::vector<int> order(total());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load_[a] < load_[b]; });
  std::vector<int> got;
  for (int g : order) {
    if (static_cast<int>(got.size()) == count) break;
    if (load_[g] < arms_per_gpu_) {
      ++load_[g];
      got.push_back(g);
    }
  }
  std::sort(got.begin(), got.end());
  return got;
}

void GpuScheduler::Release(const std::vector<int>& gpus) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int g : gpus)
      if (g >= 0 && g < total() && load_[g] > 0) --load_[g];
  }
  cv_.notify_all();
}

int GpuScheduler::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (int l : load_) n += l > 0;
  return n;
}

}  // namespace flashtick
