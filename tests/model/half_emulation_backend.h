// A test Backend that runs the model's bf16/f16 path on the CPU: it checks that each
// op receives the dtypes the mixed-precision contracts ask for (activations in the
// half dtype; biases, LayerNorm γ/β/mean/rstd and attention statistics in fp32), then
// gathers every view (any strides) into a contiguous fp32 copy, runs the CPU reference
// in fp32 and rounds the outputs back into the original views. It exercises the
// transformer's half-precision plumbing before a GPU runs it; the numbers are those of
// "fp32 math on bf16-rounded tensors", not of any CUDA kernel.
#pragma once

#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"

namespace flashtick::testing {

class HalfEmulationBackend final : public Backend {
 public:
  HalfEmulationBackend() : cpu_(BackendOptions{}) {}
  std::string name() const override { return "half_emulation"; }
  DeviceKind device() const override { return DeviceKind::kCpu; }
  bool Supports(const OpDesc& desc) const override { return true; }
  std::string KernelPath(const OpDesc& desc) const override { return "half_emulation"; }
  absl::Status Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                   absl::Span<const TensorView> outputs) override;
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) override { return cpu_.Allocate(bytes); }
  absl::Status Copy(void* dst, DeviceKind dd, const void* src, DeviceKind sd, size_t n) override {
    return cpu_.Copy(dst, dd, src, sd, n);
  }
  absl::Status Zero(void* dst, size_t bytes) override { return cpu_.Zero(dst, bytes); }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  MemoryStats Memory() const override { return cpu_.Memory(); }
  void ResetPeakMemory() override { cpu_.ResetPeakMemory(); }
  const void* memory_domain() const override { return cpu_.memory_domain(); }
  int half_ops() const { return half_ops_; }

 private:
  cpu::CpuBackend cpu_;
  int half_ops_ = 0;
};

}  // namespace flashtick::testing
