// The CUDA backend's factory (host-visible, compiles without nvcc). The backend
// itself is kernels/cuda/cuda_backend.cc: bf16/fp16 activations, fp32 master weights,
// our Flash attention kernels, cuBLASLt for matmuls.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace flashtick::cuda {

int CudaDeviceCount();  // 0 when no driver or no GPU
absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const BackendOptions& options);

}  // namespace flashtick::cuda
