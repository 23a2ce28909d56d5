// CreateBackend: "cpu", "cuda" or "auto". A request for CUDA that cannot be met is
// an error with a reason; only "auto" chooses, and it says what it chose (name()).
// Also Backend's default host staging (plain host memory).
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#ifdef FLASHTICK_WITH_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

namespace flashtick {

absl::StatusOr<std::shared_ptr<void>> Backend::AllocateHostStaging(size_t bytes) {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr)
    return absl::ResourceExhaustedError(
        absl::StrCat("host staging: out of memory for ", bytes, " bytes"));
  return std::shared_ptr<void>(p, std::free);
}

bool CudaAvailable() {
#ifdef FLASHTICK_WITH_CUDA
  return cuda::CudaDeviceCount() > 0;
#else
  return false;
#endif
}

int DeviceCount(DeviceKind kind) {
  if (kind == DeviceKind::kCpu) return 1;
#ifdef FLASHTICK_WITH_CUDA
  return cuda::CudaDeviceCount();
#else
  return 0;
#endif
}

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const std::string& device,
                                                       const BackendOptions& options) {
  if (device == "cpu") return std::unique_ptr<Backend>(new cpu::CpuBackend(options));
  if (device == "cuda" || device == "auto") {
#ifdef FLASHTICK_WITH_CUDA
    if (cuda::CudaDeviceCount() > 0) return cuda::CreateCudaBackend(options);
    if (device == "cuda")
      return absl::FailedPreconditionError(
          "--device cuda: no CUDA GPU is visible to this process (check nvidia-smi and "
          "CUDA_VISIBLE_DEVICES), or use --device cpu");
#else
    if (device == "cuda")
      return absl::FailedPreconditionError(
          "--device cuda: this flashtick was built without CUDA (configure with "
          "-DFLASHTICK_WITH_CUDA=ON), or use --device cpu");
#endif
    return std::unique_ptr<Backend>(new cpu::CpuBackend(options));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", device, "': expected cpu, cuda or auto"));
}

}  // namespace flashtick
