// ProfilingBackend: a Backend that forwards every call to another and, while its
// StepProfiler is between Begin and End, puts a mark before each op, copy and
// synchronisation, charged to the op's name (OpName) or the kind of transfer. It is how
// serve_latency_inproc --profile-ops shows where one Transformer::Predict's time goes on
// the stream without touching the model: the model runs on this backend as on any other,
// and with the profiler idle it adds one branch per call. Segments tile the forward
// (trainer/step_profiler.h), so a host gap (the ticks' encoding, a pageable copy) is
// charged to the segment open while the host worked.
#pragma once

#include <memory>
#include <utility>

#include "kernels/backend.h"
#include "trainer/step_profiler.h"

namespace flashtick::bench {

class ProfilingBackend : public Backend {
 public:
  explicit ProfilingBackend(std::unique_ptr<Backend> inner)
      : inner_(std::move(inner)), profiler_(inner_.get()) {}

  StepProfiler& profiler() { return profiler_; }

  std::string name() const override { return inner_->name(); }
  DeviceKind device() const override { return inner_->device(); }
  bool Supports(const OpDesc& desc) const override { return inner_->Supports(desc); }
  std::string KernelPath(const OpDesc& desc) const override { return inner_->KernelPath(desc); }
  absl::Status Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                   absl::Span<const TensorView> outputs) override;
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) override {
    return inner_->Allocate(bytes);
  }
  absl::Status Copy(void* dst, DeviceKind dst_device, const void* src, DeviceKind src_device,
                    size_t bytes) override;
  absl::Status Zero(void* dst, size_t bytes) override { return inner_->Zero(dst, bytes); }
  absl::Status Synchronize() override;
  absl::StatusOr<std::shared_ptr<void>> AllocateHostStaging(size_t bytes) override {
    return inner_->AllocateHostStaging(bytes);
  }
  absl::Status CopyAsync(void* dst, DeviceKind dst_device, const void* src,
                         DeviceKind src_device, size_t bytes) override;
  MemoryStats Memory() const override { return inner_->Memory(); }
  void ResetPeakMemory() override { inner_->ResetPeakMemory(); }
  const void* memory_domain() const override { return inner_->memory_domain(); }
  void* NativeStream() override { return inner_->NativeStream(); }
  absl::StatusOr<int> RecordMark() override { return inner_->RecordMark(); }
  absl::StatusOr<double> MarkElapsedMs(int from, int to) override {
    return inner_->MarkElapsedMs(from, to);
  }
  void ResetMarks() override { inner_->ResetMarks(); }
  bool SupportsCapture() const override { return inner_->SupportsCapture(); }
  absl::Status BeginCapture() override { return inner_->BeginCapture(); }
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override {
    return inner_->EndCapture();
  }
  absl::Status Replay(const CapturedWork& work) override { return inner_->Replay(work); }

 private:
  std::unique_ptr<Backend> inner_;
  StepProfiler profiler_;
};

}  // namespace flashtick::bench
