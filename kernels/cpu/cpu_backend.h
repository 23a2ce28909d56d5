// CpuBackend: the complete reference backend and the embedded default. Plain C++
// loops, f32/f64, multithreaded over rows; attention is tiled with an online
// softmax so a 23,400-step day never allocates a T×T matrix.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const BackendOptions& options);

  std::string name() const override { return "cpu_reference"; }
  DeviceKind device() const override { return DeviceKind::kCpu; }
  bool Supports(const OpDesc& desc) const override;
  std::string KernelPath(const OpDesc& desc) const override;
  absl::Status Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                   absl::Span<const TensorView> outputs) override;

  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) override;
  absl::Status Copy(void* dst, DeviceKind dst_device, const void* src, DeviceKind src_device,
                    size_t bytes) override;
  absl::Status Zero(void* dst, size_t bytes) override;
  absl::Status CopyAsync(void* dst, DeviceKind dst_device, const void* src,
                         DeviceKind src_device, size_t bytes) override;
  absl::Status Synchronize() override;
  MemoryStats Memory() const override;
  void ResetPeakMemory() override;
  const void* memory_domain() const override { return counters_.get(); }

  // Run is synchronous, so a mark is the host clock when it is recorded.
  absl::StatusOr<int> RecordMark() override;
  absl::StatusOr<double> MarkElapsedMs(int from, int to) override;
  void ResetMarks() override;

  // Capture records closures of the capturing thread's calls (Backend::BeginCapture);
  // other threads keep running theirs at once.
  bool SupportsCapture() const override { return true; }
  absl::Status BeginCapture() override;
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override;
  absl::Status Replay(const CapturedWork& work) override;

  ThreadPool& pool() { return pool_; }

 private:
  using Recorded = std::function<absl::Status()>;
  // True (and `fn` recorded) when the calling thread is capturing.
  bool Record(Recorded fn);
  bool CapturingHere();
  // Runs a call whose op Run has checked (Supports): now, or when a recording replays.
  absl::Status RunNow(const OpDesc& desc, absl::Span<const TensorView> inputs,
                      absl::Span<const TensorView> outputs);
  absl::Status CopyNow(void* dst, DeviceKind dst_device, const void* src, DeviceKind src_device,
                       size_t bytes);

  ThreadPool pool_;
  std::mutex marks_mu_;
  std::vector<std::chrono::steady_clock::time_point> marks_;  // this round's; capacity kept
  // Shared with allocation deleters, which may outlive a moved-from backend.
  struct Counters {
    std::atomic<int64_t> used{0}, peak{0};
  };
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
  std::mutex capture_mu_;
  std::thread::id capture_thread_;  // default-constructed: nobody is capturing
  std::atomic<bool> capture_open_{false};  // lets every Run skip the lock when false
  std::vector<Recorded> recording_;
};

}  // namespace flashtick::cpu
