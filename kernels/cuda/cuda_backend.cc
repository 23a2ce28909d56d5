// CudaBackend ("flash_cuda"): the Backend interface on one GPU. Activations run in
// bf16/fp16 with fp32 accumulation, master-weight ops (optimizers, casts) in fp32;
// matmuls go to cuBLASLt, attention to our Flash kernels (kernels/cuda/attention/),
// every other op to a kernel in kernels/cuda/<op>.cu. Memory and the stream belong to
// CudaDevice. Run and CopyAsync enqueue on the backend's stream and return without
// waiting; Copy to the host and Synchronize wait. Variants we lack return Unimplemented.
#include "kernels/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/common/op_switch.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {
namespace {

bool IsHalf(DType t) { return t == DType::kBF16 || t == DType::kF16; }
bool IsAttention(Op op) {
  return op == Op::kAttentionFwd || op == Op::kAttentionBwd || op == Op::kAttentionBwdBwd ||
         op == Op::kAttentionDecode;
}

// A captured stream turned into an executable graph (Backend::EndCapture); it keeps the
// device alive, and destroys the graph with it current.
class CudaGraphWork final : public CapturedWork {
 public:
  CudaGraphWork(std::shared_ptr<CudaDevice> device, cudaGraphExec_t exec)
      : device(std::move(device)), exec(exec) {}
  ~CudaGraphWork() override {
    if (device->Activate().ok() && cudaGraphExecDestroy(exec) != cudaSuccess) cudaGetLastError();
  }
  std::shared_ptr<CudaDevice> device;
  cudaGraphExec_t exec;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::shared_ptr<CudaDevice> device) : device_(std::move(device)) {}
  ~CudaBackend() override {
    if ((events_.empty() && capture_stream_ == nullptr) || !device_->Activate().ok()) return;
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (capture_stream_ != nullptr) cudaStreamDestroy(capture_stream_);
  }

  std::string name() const override { return "flash_cuda"; }
  DeviceKind device() const override { return DeviceKind::kCuda; }

  bool Supports(const OpDesc& desc) const override {
    switch (desc.op) {
      // Master-weight ops: fp32 state.
      case Op::kAdamW:
      case Op::kSophiaH:
      case Op::kRademacher:
      case Op::kProbeProduct:
        return desc.dtype == DType::kF32;
      case Op::kCast:  // from any of fp32, fp64, bf16, fp16 (desc.dtype is X's)
        return desc.dtype == DType::kF32 || desc.dtype == DType::kF64 || IsHalf(desc.dtype);
      // Attention: the Flash kernels are half-precision only (kernels/ops/attention.h),
      // for the head dims flash_host.h lists per op (0: the caller did not say;
      // FlashBobRunsHeadDim for BoB).
      case Op::kAttentionFwd:
      case Op::kAttentionBwd:
      case Op::kAttentionBwdBwd:
      case Op::kAttentionDecode:
        return IsHalf(desc.dtype) && flash::FlashOpRunsHeadDim(desc.op, desc.attention.head_dim);
      // Everything else: bf16/fp16 activations, and fp32 (exact parity, fp32 gradients).
      default:
        return desc.dtype == DType::kF32 || IsHalf(desc.dtype);
    }
  }

  std::string KernelPath(const OpDesc& desc) const override {
    switch (desc.op) {
      case Op::kAttentionFwd:
      case Op::kAttentionBwd:
      case Op::kAttentionBwdBwd:
      case Op::kAttentionDecode:
        return DispatchedAttentionKernelPath(desc, desc.attention.head_dim, device_->context());
      case Op::kMatmul:
        return absl::StrCat("flash_cuda_cublaslt_sm", device_->context().sm);
      default:
        return absl::StrCat("flash_cuda_", OpName(desc.op));
    }
  }

  absl::Status Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                   absl::Span<const TensorView> outputs) override {
    if (!Supports(desc)) {
      if (IsHalf(desc.dtype) && desc.attention.head_dim != 0 && IsAttention(desc.op))
        return absl::UnimplementedError(absl::StrCat(
            "flash_cuda has no ", desc.DebugString(), " for head dim ", desc.attention.head_dim,
            " (it runs ", flash::FlashOpHeadDimsText(desc.op), ")"));
      return absl::UnimplementedError(
          absl::StrCat("flash_cuda has no ", desc.DebugString(), " (",
                       DTypeName(desc.dtype), " is not a variant it implements)"));
    }
    for (const auto* list : {&inputs, &outputs}) {
      for (const auto& t : *list) {
        if (t.data != nullptr && t.device != DeviceKind::kCuda)
          return absl::InvalidArgumentError(absl::StrCat(
              OpName(desc.op), ": tensor ", t.DebugString(),
              " is not on the GPU; copy it with Backend::Copy first"));
      }
    }
    RETURN_IF_ERROR(device_->Activate());
    CudaContext& ctx = CapturingHere() ? capture_ctx_ : device_->context();
    return RunOpFunction("flash_cuda", desc, inputs, outputs, ctx);
  }

  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) override {
    return CudaDevice::Allocate(device_, bytes);
  }

  absl::Status Copy(void* dst, DeviceKind dst_device, const void* src, DeviceKind src_device,
                    size_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    if (dst == nullptr || src == nullptr)
      return absl::InvalidArgumentError("flash_cuda: Copy of a null pointer");
    if (CapturingHere())
      return absl::FailedPreconditionError(
          "flash_cuda: Copy waits, so it cannot be captured; use CopyAsync");
    RETURN_IF_ERROR(device_->Activate());
    cudaStream_t stream = device_->context().stream;
    const bool to_host = dst_device == DeviceKind::kCpu;
    const bool from_host = src_device == DeviceKind::kCpu;
    RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(dst, src, bytes, CopyKind(dst_device, src_device), stream));
    if (to_host) {
      // The caller reads dst as soon as we return: wait for the copy and every
      // kernel queued before it.
      RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
    } else if (from_host && !IsPageable(src)) {
      // From pageable memory the runtime stages src before returning, so the caller may
      // reuse it at once; from pinned memory the DMA reads src later, so wait.
      RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
    }
    return absl::OkStatus();
  }

  // Page-locked, so a decode step's copies are single DMAs with no staging memcpy and
  // no cudaPointerGetAttributes query (Copy's IsPageable).
  absl::StatusOr<std::shared_ptr<void>> AllocateHostStaging(size_t bytes) override {
    RETURN_IF_ERROR(device_->Activate());
    void* p = nullptr;
    RETURN_IF_CUDA_ERROR(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocDefault));
    return std::shared_ptr<void>(p, [](void* q) {
      if (cudaFreeHost(q) != cudaSuccess) cudaGetLastError();
    });
  }

  // No wait in either direction: the caller keeps src and dst alone until Synchronize.
  absl::Status CopyAsync(void* dst, DeviceKind dst_device, const void* src, DeviceKind src_device,
                         size_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    if (dst == nullptr || src == nullptr)
      return absl::InvalidArgumentError("flash_cuda: CopyAsync of a null pointer");
    RETURN_IF_ERROR(device_->Activate());
    RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(dst, src, bytes, CopyKind(dst_device, src_device),
                                         StreamHere()));
    return absl::OkStatus();
  }

  absl::Status Zero(void* dst, size_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    RETURN_IF_ERROR(device_->Activate());
    RETURN_IF_CUDA_ERROR(cudaMemsetAsync(dst, 0, bytes, StreamHere()));
    return absl::OkStatus();
  }

  absl::Status Synchronize() override {
    if (CapturingHere())
      return absl::FailedPreconditionError("flash_cuda: Synchronize while capturing");
    RETURN_IF_ERROR(device_->Activate());
    RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(device_->context().stream));
    // A kernel fault is reported by the sync; anything else pending surfaces here.
    RETURN_IF_CUDA_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

  MemoryStats Memory() const override { return device_->Memory(); }
  void ResetPeakMemory() override { device_->ResetPeak(); }
  // CudaDevice::Allocate charges scopes of the device (buffers outlive the backend).
  const void* memory_domain() const override { return device_.get(); }
  void* NativeStream() override { return device_->context().stream; }

  // Marks: timing events created on first use and reused by every later round; recording
  // one enqueues it on the stream and never waits.
  absl::StatusOr<int> RecordMark() override {
    RETURN_IF_ERROR(device_->Activate());
    std::lock_guard<std::mutex> lock(marks_mu_);
    if (used_ == events_.size()) {
      cudaEvent_t e = nullptr;
      RETURN_IF_CUDA_ERROR(cudaEventCreate(&e));
      events_.push_back(e);
    }
    RETURN_IF_CUDA_ERROR(cudaEventRecord(events_[used_], device_->context().stream));
    return static_cast<int>(used_++);
  }

  // Capture on a private stream of the same priority, so work other threads enqueue on
  // the backend's stream meanwhile (another model's request: a server shares one
  // backend among its models) runs as usual and never lands in the graph; the capturing
  // thread's Run, CopyAsync and Zero go to that stream (capture_ctx_). Replay launches
  // the graph on the backend's stream. Every kernel our ops launch takes its arguments by
  // value and cuBLASLt runs in the device's fixed workspace; scratch memory, which would
  // be freed before the replay that uses it, is refused while capturing, so an op that
  // needs it fails the capture (the caller then runs op by op) instead of replaying
  // into freed memory.
  bool SupportsCapture() const override { return true; }
  absl::Status BeginCapture() override {
    RETURN_IF_ERROR(device_->Activate());
    std::lock_guard<std::mutex> lock(capture_mu_);
    if (capture_thread_ != std::thread::id())
      return absl::FailedPreconditionError("flash_cuda: a capture is already open");
    if (capture_stream_ == nullptr)
      RETURN_IF_CUDA_ERROR(cudaStreamCreateWithPriority(&capture_stream_, cudaStreamNonBlocking,
                                                        device_->stream_priority()));
    capture_ctx_ = device_->context();
    capture_ctx_.stream = capture_stream_;
    capture_ctx_.scratch = [](size_t) -> absl::StatusOr<std::shared_ptr<void>> {
      return absl::FailedPreconditionError(
          "flash_cuda: scratch memory cannot be captured (it would be freed before replay)");
    };
    RETURN_IF_CUDA_ERROR(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
    capture_thread_ = std::this_thread::get_id();
    capture_open_.store(true, std::memory_order_release);
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override {
    RETURN_IF_ERROR(device_->Activate());
    {
      std::lock_guard<std::mutex> lock(capture_mu_);
      if (capture_thread_ != std::this_thread::get_id())
        return absl::FailedPreconditionError("flash_cuda: this thread has no open capture");
      capture_thread_ = std::thread::id();
      capture_open_.store(false, std::memory_order_release);
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(capture_stream_, &graph);
    if (end != cudaSuccess) {
      cudaGetLastError();  // a capture invalidated by an illegal call reports it here
      if (graph != nullptr) cudaGraphDestroy(graph);
      return absl::InternalError(
          absl::StrCat("flash_cuda: stream capture failed: ", cudaGetErrorString(end)));
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    RETURN_IF_CUDA_ERROR(inst);
    return std::unique_ptr<CapturedWork>(new CudaGraphWork(device_, exec));
  }
  absl::Status Replay(const CapturedWork& work) override {
    if (CapturingHere())
      return absl::FailedPreconditionError("flash_cuda: Replay while capturing");
    const auto* graph = dynamic_cast<const CudaGraphWork*>(&work);
    if (graph == nullptr || graph->device != device_)
      return absl::InvalidArgumentError("flash_cuda: Replay of another backend's capture");
    RETURN_IF_ERROR(device_->Activate());
    RETURN_IF_CUDA_ERROR(cudaGraphLaunch(graph->exec, device_->context().stream));
    return absl::OkStatus();
  }

  absl::StatusOr<double> MarkElapsedMs(int from, int to) override {
    RETURN_IF_ERROR(device_->Activate());
    std::lock_guard<std::mutex> lock(marks_mu_);
    if (from < 0 || to < 0 || static_cast<size_t>(from) >= used_ ||
        static_cast<size_t>(to) >= used_)
      return absl::OutOfRangeError(
          absl::StrCat("flash_cuda: marks ", from, " and ", to, " of ", used_, " recorded"));
    float ms = 0;
    RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&ms, events_[from], events_[to]));
    return static_cast<double>(ms);
  }

  void ResetMarks() override {
    std::lock_guard<std::mutex> lock(marks_mu_);
    used_ = 0;
  }

 private:
  static cudaMemcpyKind CopyKind(DeviceKind dst_device, DeviceKind src_device) {
    const bool to_host = dst_device == DeviceKind::kCpu;
    const bool from_host = src_device == DeviceKind::kCpu;
    return to_host ? (from_host ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost)
                   : (from_host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice);
  }

  static bool IsPageable(const void* p) {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
      cudaGetLastError();
      return true;
    }
    return attr.type == cudaMemoryTypeUnregistered;
  }

  // True when the calling thread has a capture open (one atomic load otherwise).
  bool CapturingHere() {
    if (!capture_open_.load(std::memory_order_acquire)) return false;
    std::lock_guard<std::mutex> lock(capture_mu_);
    return capture_thread_ == std::this_thread::get_id();
  }
  // The stream the calling thread's work goes to: the capture's, or the backend's.
  cudaStream_t StreamHere() {
    return CapturingHere() ? capture_stream_ : device_->context().stream;
  }

  std::shared_ptr<CudaDevice> device_;
  std::mutex capture_mu_;
  std::thread::id capture_thread_;  // default-constructed: nobody is capturing
  std::atomic<bool> capture_open_{false};
  cudaStream_t capture_stream_ = nullptr;  // created on the first capture
  CudaContext capture_ctx_;                // the device's context on capture_stream_
  std::mutex marks_mu_;
  std::vector<cudaEvent_t> events_;  // the pool: events_[0, used_) are this round's marks
  size_t used_ = 0;
};

}  // namespace

int CudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const BackendOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<CudaDevice> device, CudaDevice::Create(options.device_index,
                                                                        options.stream_priority));
  device->context().fwd_splits = std::max(0, options.attention_fwd_splits);
  device->context().deterministic = options.deterministic;
  return std::unique_ptr<Backend>(new CudaBackend(std::move(device)));
}

}  // namespace flashtick::cuda
