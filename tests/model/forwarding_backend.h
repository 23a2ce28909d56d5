// A Backend that forwards every call to a CPU reference backend, for tests that watch
// or alter what the model asks of its backend (decode_step_transfers_test.cc,
// decode_capture_test.cc): a test overrides the calls it counts or changes and calls
// ForwardingCpuBackend's for the rest.
#pragma once

#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"

namespace flashtick::testing {

class ForwardingCpuBackend : public Backend {
 public:
  ForwardingCpuBackend() : cpu_(BackendOptions{}) {}
  std::string name() const override { return cpu_.name(); }
  DeviceKind device() const override { return cpu_.device(); }
  bool Supports(const OpDesc& d) const override { return cpu_.Supports(d); }
  std::string KernelPath(const OpDesc& d) const override { return cpu_.KernelPath(d); }
  absl::Status Run(const OpDesc& d, absl::Span<const TensorView> in,
                   absl::Span<const TensorView> out) override {
    return cpu_.Run(d, in, out);
  }
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) override { return cpu_.Allocate(bytes); }
  absl::Status Copy(void* dst, DeviceKind dd, const void* src, DeviceKind sd, size_t bytes) override {
    return cpu_.Copy(dst, dd, src, sd, bytes);
  }
  absl::Status CopyAsync(void* dst, DeviceKind dd, const void* src, DeviceKind sd,
                         size_t bytes) override {
    return cpu_.CopyAsync(dst, dd, src, sd, bytes);
  }
  absl::Status Zero(void* dst, size_t bytes) override { return cpu_.Zero(dst, bytes); }
  absl::Status Synchronize() override { return cpu_.Synchronize(); }
  MemoryStats Memory() const override { return cpu_.Memory(); }
  void ResetPeakMemory() override { cpu_.ResetPeakMemory(); }
  const void* memory_domain() const override { return cpu_.memory_domain(); }

 protected:
  cpu::CpuBackend cpu_;
};

}  // namespace flashtick::testing
