// GpuScheduler: places sweep arms on the free GPUs of one host. An arm asks for the
// GPUs it trains on (one, or several for a data-parallel arm) and blocks until that
// many are free; it gets the lowest free indices and hands them back when it ends.
// With no GPUs (the CPU backend, or a build without CUDA) every request is granted at
// once with an empty list: the arm runs on the CPU. The sweep engine reports each
// placement through SweepHooks::on_placement, which the experiment service turns into
// flashtick_sweep_arm_gpu / flashtick_sweep_gpus_busy (server/metrics/metrics.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

class GpuScheduler {
 public:
  // arms_per_gpu > 1 lets that many arms share a GPU (small models leave most of a
  // large GPU idle; sweep_config.h arms_per_gpu).
  explicit GpuScheduler(int gpus, int arms_per_gpu = 1)
      : load_(gpus > 0 ? gpus : 0, 0), arms_per_gpu_(arms_per_gpu > 0 ? arms_per_gpu : 1) {}

  // `count` distinct GPUs (>= 1; ignored without GPUs), waiting while fewer have room.
  // Cancelled when *cancel becomes true while waiting; InvalidArgument when the host
  // has fewer than `count` GPUs in all.
  absl::StatusOr<std::vector<int>> Acquire(int count, const std::atomic<bool>* cancel = nullptr);
  void Release(const std::vector<int>& gpus);

  int total() const { return static_cast<int>(load_.size()); }
  int busy() const;  // GPUs holding at least one arm

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> load_;  // arms on each GPU
  int arms_per_gpu_ = 1;
};

}  // namespace flashtick
