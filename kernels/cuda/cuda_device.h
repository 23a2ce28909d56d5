// CudaDevice: what one CUDA backend owns on its GPU — a non-blocking stream, a
// cuBLASLt handle and its workspace, and a private stream-ordered memory pool with
// used/peak accounting (device-wide, and per MemoryScope whose domain is this device). Shared (std::shared_ptr) by the backend and by every
// allocation it hands out, so the stream and pool outlive the last buffer even if
// the backend is destroyed first. Host-visible; compiles without nvcc.
//
// Allocation: cudaMallocFromPoolAsync on our stream. The pool keeps freed memory
// (release threshold = max) so a training step reuses it without remapping; on
// out-of-memory it trims the pool once and retries, then fails with
// absl::ResourceExhaustedError naming the bytes asked and the bytes free.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_ops.h"

typedef struct CUmemPoolHandle_st* cudaMemPool_t;

namespace flashtick::cuda {

class CudaDevice : public std::enable_shared_from_this<CudaDevice> {
 public:
  // cuBLASLt workspace: 32 MiB, what cuBLAS itself reserves on Hopper for its
  // split-K and stream-K kernels (smaller workspaces rule those algorithms out).
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  // `priority` kHigh: the stream takes the device's greatest priority (BackendOptions).
  static absl::StatusOr<std::shared_ptr<CudaDevice>> Create(
      int device_index, StreamPriority priority = StreamPriority::kNormal);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  // Makes this device current on the calling thread (no-op when it already is).
  absl::Status Activate() const;

  // Stream-ordered device memory; `self` is this device (kept alive by the deleter).
  static absl::StatusOr<std::shared_ptr<void>> Allocate(const std::shared_ptr<CudaDevice>& self,
                                                        size_t bytes);

  MemoryStats Memory() const;
  void ResetPeak();

  CudaContext& context() { return ctx_; }
  int device_index() const { return device_index_; }
  const std::string& device_name() const { return device_name_; }
  // The CUDA priority the stream was created with (lower is more urgent; 0 is normal).
  int stream_priority() const { return stream_priority_; }

 private:
  explicit CudaDevice(int device_index) : device_index_(device_index) {}
  void Account(int64_t delta);
  std::string PoolReport() const;

  int device_index_;
  std::string device_name_;
  int stream_priority_ = 0;
  int64_t total_bytes_ = 0;
  CudaContext ctx_;
  cudaMemPool_t pool_ = nullptr;
  std::atomic<int64_t> used_{0}, peak_{0};
};

}  // namespace flashtick::cuda
