// Placeholder until the CUDA backend lands: reports the device count and refuses
// to create a backend, so "--device cuda" fails with a clear message, never silently.
#include "kernels/cuda/cuda_backend.h"

#include <cuda_runtime.h>

namespace flashtick::cuda {

int CudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const BackendOptions& options) {
  return absl::UnimplementedError("the CUDA backend is not built yet");
}

}  // namespace flashtick::cuda
