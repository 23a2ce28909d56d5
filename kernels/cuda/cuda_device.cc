// CudaDevice: stream, cuBLASLt handle and workspace, and a private stream-ordered
// memory pool with used/peak accounting (see cuda_device.h for the contract).
#include "kernels/cuda/cuda_device.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/common/atomic_max.h"
#include "kernels/memory_scope.h"

namespace flashtick::cuda {

absl::StatusOr<std::shared_ptr<CudaDevice>> CudaDevice::Create(int device_index,
                                                               StreamPriority priority) {
  int count = 0;
  RETURN_IF_CUDA_ERROR(cudaGetDeviceCount(&count));
  if (device_index < 0 || device_index >= count)
    return absl::InvalidArgumentError(absl::StrCat("CUDA device ", device_index,
                                                   " does not exist; this machine has ", count,
                                                   " (check CUDA_VISIBLE_DEVICES)"));
  std::shared_ptr<CudaDevice> dev(new CudaDevice(device_index));
  RETURN_IF_CUDA_ERROR(cudaSetDevice(device_index));
  cudaDeviceProp prop{};
  RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&prop, device_index));
  dev->device_name_ = prop.name;
  dev->total_bytes_ = static_cast<int64_t>(prop.totalGlobalMem);
  dev->ctx_.sm = prop.major * 10 + prop.minor;
  dev->ctx_.num_sms = prop.multiProcessorCount;
  if (dev->ctx_.sm < 80)
    return absl::FailedPreconditionError(absl::StrCat(
        "flash_cuda needs compute capability 8.0 or newer (A100, H100/H200); ", prop.name,
        " is ", prop.major, ".", prop.minor, ": use --device cpu"));

  // Non-blocking: our stream never waits on work a library queued on the legacy stream.
  // CUDA numbers priorities downwards: `greatest` is the most urgent (e.g. −5), 0 normal.
  int least = 0, greatest = 0;
  RETURN_IF_CUDA_ERROR(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  dev->stream_priority_ = priority == StreamPriority::kHigh ? greatest : least;
  RETURN_IF_CUDA_ERROR(cudaStreamCreateWithPriority(&dev->ctx_.stream, cudaStreamNonBlocking,
                                                    dev->stream_priority_));
  RETURN_IF_CUBLAS_ERROR(cublasLtCreate(&dev->ctx_.cublaslt));

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device_index;
  RETURN_IF_CUDA_ERROR(cudaMemPoolCreate(&dev->pool_, &props));
  // Keep freed blocks in the pool: step N+1 reuses step N's memory without going
  // back to the driver. OOM trims the pool before giving up (Allocate).
  uint64_t threshold = std::numeric_limits<uint64_t>::max();
  RETURN_IF_CUDA_ERROR(
      cudaMemPoolSetAttribute(dev->pool_, cudaMemPoolAttrReleaseThreshold, &threshold));

  // The workspace lives for the backend's lifetime; it counts as used memory.
  RETURN_IF_CUDA_ERROR(cudaMalloc(&dev->ctx_.workspace, kWorkspaceBytes));
  dev->ctx_.workspace_bytes = kWorkspaceBytes;
  dev->Account(static_cast<int64_t>(kWorkspaceBytes));
  // Launcher scratch comes from the same pool. The lambda holds a raw pointer (the
  // context lives inside the device, so a shared_ptr here would be a cycle) and takes
  // a shared reference per allocation.
  CudaDevice* raw = dev.get();
  dev->ctx_.scratch = [raw](size_t bytes) { return Allocate(raw->shared_from_this(), bytes); };
  return dev;
}

CudaDevice::~CudaDevice() {
  // Teardown errors have nowhere to go (no Status from a destructor) and may be
  // "driver shutting down" at process exit; each call is attempted regardless.
  cudaSetDevice(device_index_);
  if (ctx_.stream != nullptr) cudaStreamSynchronize(ctx_.stream);
  if (ctx_.workspace != nullptr) cudaFree(ctx_.workspace);
  if (ctx_.cublaslt != nullptr) cublasLtDestroy(ctx_.cublaslt);
  if (pool_ != nullptr) cudaMemPoolDestroy(pool_);
  if (ctx_.stream != nullptr) cudaStreamDestroy(ctx_.stream);
  cudaGetLastError();
}

absl::Status CudaDevice::Activate() const {
  int current = -1;
  RETURN_IF_CUDA_ERROR(cudaGetDevice(&current));
  if (current != device_index_) RETURN_IF_CUDA_ERROR(cudaSetDevice(device_index_));
  return absl::OkStatus();
}

void CudaDevice::Account(int64_t delta) {
  RaiseToAtLeast(peak_, used_.fetch_add(delta) + delta);
}

std::string CudaDevice::PoolReport() const {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) cudaGetLastError();
  uint64_t reserved = 0;
  if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess)
    cudaGetLastError();
  return absl::StrCat(free_bytes, " bytes free of ", total, " on GPU ", device_index_, " (",
                      device_name_, "); flashtick holds ", used_.load(), " bytes in use and ",
                      reserved, " reserved in its pool");
}

absl::StatusOr<std::shared_ptr<void>> CudaDevice::Allocate(const std::shared_ptr<CudaDevice>& self,
                                                           size_t bytes) {
  RETURN_IF_ERROR(self->Activate());
  // More than the whole GPU can never succeed; say so without asking the driver (which
  // may call a size beyond the device an invalid value rather than out of memory).
  if (static_cast<int64_t>(bytes) > self->total_bytes_ || static_cast<int64_t>(bytes) < 0)
    return absl::ResourceExhaustedError(absl::StrCat("GPU out of memory: asked for ", bytes,
                                                     " bytes, more than the GPU has; ",
                                                     self->PoolReport()));
  // A zero-byte request still gets a distinct, freeable pointer.
  const size_t request = bytes == 0 ? 1 : bytes;
  void* p = nullptr;
  cudaError_t err = cudaMallocFromPoolAsync(&p, request, self->pool_, self->ctx_.stream);
  if (err == cudaErrorMemoryAllocation) {
    // Out of memory is not sticky, but it stays in cudaGetLastError and would be
    // reported by the next launch check: clear it, give cached blocks back, retry once.
    cudaGetLastError();
    RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(self->ctx_.stream));
    RETURN_IF_CUDA_ERROR(cudaMemPoolTrimTo(self->pool_, 0));
    err = cudaMallocFromPoolAsync(&p, request, self->pool_, self->ctx_.stream);
  }
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return absl::ResourceExhaustedError(absl::StrCat("GPU out of memory: asked for ", bytes,
                                                     " bytes; ", self->PoolReport()));
  }
  RETURN_IF_CUDA_ERROR(err);
  self->Account(static_cast<int64_t>(bytes));
  // The calling thread's open scopes on this device count it too (launcher scratch
  // included); the free credits the same scopes, from whichever thread drops it.
  const MemoryCharge charge = MemoryCharge::Charge(self.get(), static_cast<int64_t>(bytes));
  std::shared_ptr<CudaDevice> keep = self;
  return std::shared_ptr<void>(p, [keep, charge, bytes](void* q) {
    // Stream-ordered free: kernels queued before this point still see the buffer.
    if (cudaFreeAsync(q, keep->ctx_.stream) != cudaSuccess) cudaGetLastError();
    keep->Account(-static_cast<int64_t>(bytes));
    charge.Release();
  });
}

MemoryStats CudaDevice::Memory() const {
  return MemoryStats{used_.load(), peak_.load(), total_bytes_};
}

void CudaDevice::ResetPeak() { peak_.store(used_.load()); }

}  // namespace flashtick::cuda
