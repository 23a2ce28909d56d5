// CUDA and cuBLASLt errors as absl::Status, for host launchers and the CUDA backend.
//   RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(...));      // any cudaError_t expression
//   RETURN_IF_CUDA_ERROR(cudaGetLastError());        // after every kernel launch
//   RETURN_IF_CUBLAS_ERROR(cublasLtMatmul(...));     // any cublasStatus_t expression
// Out-of-memory maps to ResourceExhausted (the service answers RESOURCE_EXHAUSTED);
// everything else is Internal with the failing expression, file and line, so a person
// can find the call. Include only from files compiled with the CUDA toolkit headers.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick::cuda {

inline absl::Status CudaErrorToStatus(cudaError_t err, const char* expr, const char* file,
                                      int line) {
  std::string msg = absl::StrCat("flash_cuda: ", expr, " failed at ", file, ":", line, ": ",
                                 cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
  if (err == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(msg);
  return absl::InternalError(msg);
}

inline absl::Status CublasErrorToStatus(cublasStatus_t err, const char* expr, const char* file,
                                        int line) {
  std::string msg = absl::StrCat("flash_cuda: ", expr, " failed at ", file, ":", line,
                                 ": ", cublasLtGetStatusName(err), " (",
                                 cublasLtGetStatusString(err), ")");
  if (err == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  if (err == CUBLAS_STATUS_NOT_SUPPORTED || err == CUBLAS_STATUS_INVALID_VALUE)
    return absl::InvalidArgumentError(msg);
  return absl::InternalError(msg);
}

}  // namespace flashtick::cuda

#define RETURN_IF_CUDA_ERROR(expr)                                                    \
  do {                                                                                \
    const cudaError_t _ft_cuda_err = (expr);                                          \
    if (_ft_cuda_err != cudaSuccess)                                                  \
      return ::flashtick::cuda::CudaErrorToStatus(_ft_cuda_err, #expr, __FILE__, __LINE__); \
  } while (0)

#define RETURN_IF_CUBLAS_ERROR(expr)                                                  \
  do {                                                                                \
    const cublasStatus_t _ft_cublas_err = (expr);                                     \
    if (_ft_cublas_err != CUBLAS_STATUS_SUCCESS)                                      \
      return ::flashtick::cuda::CublasErrorToStatus(_ft_cublas_err, #expr, __FILE__, __LINE__); \
  } while (0)
