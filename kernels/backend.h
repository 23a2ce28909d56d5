// The Backend interface, in the style of ggml: one interface, several backends
// (the CPU reference and CUDA), each of which says which op variants it supports.
// The model calls ops only through a Backend. Tensor contracts of every op (math,
// shapes, dtypes) are in kernels/ops/<op>.h; OpDesc carries the op and its attributes.
//
//   Run(desc, inputs, outputs) -> absl::Status
//
// A backend that lacks a variant returns absl::UnimplementedError from Run and false
// from Supports; parity tests report that as SKIP, never as a silent pass.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

struct MemoryStats {
  int64_t used_bytes = 0;   // currently allocated through this backend
  int64_t peak_bytes = 0;   // high-water mark since the last ResetPeak()
  int64_t total_bytes = 0;  // device capacity (0 when unknown, e.g. host RAM)
};

// The priority of a CUDA backend's stream (BackendOptions::stream_priority).
enum class StreamPriority { kNormal, kHigh };

struct BackendOptions {
  int threads = 0;      // CPU worker threads; 0 = hardware concurrency
  int device_index = 0; // CUDA device ordinal
  // CUDA attention forward: k ≥ 1 fixes the number of key splits (1: never split), for
  // benchmarks that compare split-KV with the unsplit kernel; 0 = chosen per shape.
  int attention_fwd_splits = 0;
  // CUDA: kHigh creates the backend's stream at the device's greatest priority
  // (cudaDeviceGetStreamPriorityRange). When several streams have work queued, the
  // block scheduler starts the high-priority stream's blocks first as SMs free up; it
  // does not preempt blocks already running. flashtickd serves on a kHigh backend and
  // trains sweep arms on kNormal ones, so a request's kernels overtake the queued
  // kernels of a training step (docs/serving.md, "Serving beside a sweep"). The CPU
  // backend ignores it.
  StreamPriority stream_priority = StreamPriority::kNormal;
  // CUDA: bitwise-repeatable results. The attention backward then runs cuDNN's
  // deterministic SDPA backward (ours and cuDNN's default engine add dQ with atomics),
  // and fails with FAILED_PRECONDITION where that cannot run: a build without cuDNN, a
  // mode that asks for ours only (`flash`, `flash_sm90a`), a shape cuDNN refuses. Every
  // other op is deterministic already, and so is the CPU backend, which ignores it
  // (docs/kernels/cudnn.md, "Deterministic backward").
  bool deterministic = false;
};

// A recording of a backend's work made by Backend::EndCapture, replayed by
// Backend::Replay; what it holds is the backend's own (a CUDA graph on the GPU).
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu_reference" or "flash_cuda"; the name every response and metric reports.
  virtual std::string name() const = 0;
  virtual DeviceKind device() const = 0;

  virtual bool Supports(const OpDesc& desc) const = 0;
  // The kernel path that Run would take for `desc` (e.g. "flash_cuda_sm80_d64").
  virtual std::string KernelPath(const OpDesc& desc) const = 0;
  virtual absl::Status Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                           absl::Span<const TensorView> outputs) = 0;

  // Memory on this backend's device. The returned pointer frees itself.
  virtual absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) = 0;
  // Copies between host and this backend's device (either direction) or within it.
  virtual absl::Status Copy(void* dst, DeviceKind dst_device, const void* src,
                            DeviceKind src_device, size_t bytes) = 0;
  virtual absl::Status Zero(void* dst, size_t bytes) = 0;
  virtual absl::Status Synchronize() = 0;
  // Host memory for small transfers repeated on a latency path (a decode step's input
  // row and probabilities): page-locked on CUDA (cudaHostAlloc), so a copy from or to
  // it is one DMA on the stream instead of the driver's staging through its own pinned
  // buffer (CUDA C++ Programming Guide, "Page-Locked Host Memory"); plain host memory
  // elsewhere. Allocate it once and reuse it: pinning is a slow system call. Not
  // counted in Memory() (it is not device memory).
  virtual absl::StatusOr<std::shared_ptr<void>> AllocateHostStaging(size_t bytes);
  // Copy, enqueued on the stream without waiting in either direction: `src` must stay
  // unchanged and `dst` unread until the next Synchronize. From or to memory of
  // AllocateHostStaging it needs no wait of its own, where Copy to the host waits for
  // the stream. Default: Copy (synchronous backends).
  virtual absl::Status CopyAsync(void* dst, DeviceKind dst_device, const void* src,
                                 DeviceKind src_device, size_t bytes) {
    return Copy(dst, dst_device, src, src_device, bytes);
  }
  // Backend-wide: every thread's allocations; ResetPeakMemory restarts the peak for
  // all of them. One request's own memory among concurrent work: MemoryScope.
  virtual MemoryStats Memory() const = 0;
  virtual void ResetPeakMemory() = 0;
  // The identity of the allocator behind Allocate, which charges the calling
  // thread's open MemoryScopes of this domain (kernels/memory_scope.h). A backend
  // that forwards Allocate to another returns that one's domain.
  virtual const void* memory_domain() const = 0;
  // The native stream Run enqueues on (a cudaStream_t on CUDA), so a library that
  // must order its own work against ours (NCCL all-reduces, research/parallel/) can wait
  // on it with events; nullptr where Run is synchronous (the CPU backend).
  virtual void* NativeStream() { return nullptr; }
  // Profiling marks, used only when asked (nothing is recorded otherwise): RecordMark
  // puts a mark on the stream Run enqueues on (CUDA: an event from a reused pool; the
  // CPU, whose Run is synchronous: the host clock) and returns its index. MarkElapsedMs
  // is the time between two marks of this round, valid after one Synchronize; ResetMarks
  // starts a new round, reusing the marks. Unimplemented by default.
  virtual absl::StatusOr<int> RecordMark() { return absl::UnimplementedError("no marks"); }
  virtual absl::StatusOr<double> MarkElapsedMs(int from, int to) {
    return absl::UnimplementedError("no marks");
  }
  virtual void ResetMarks() {}

  // Capture, the CUDA-graph idea behind one interface (CUDA C++ Programming Guide,
  // "CUDA Graphs"): between BeginCapture and EndCapture, the calling thread's Run,
  // CopyAsync and Zero are recorded instead of run (arguments are checked as they are
  // recorded); Replay runs the recording again, in order, on the backend's stream. A
  // recording keeps raw pointers and reads every buffer, host staging included, when it
  // is replayed, so work captured once repeats with new data as long as nothing it
  // depends on lives in its arguments: a decode step names its position through device
  // memory for this reason (kernels/ops/kv_cache.h). The buffers must outlive the
  // recording. Copy, Synchronize and Replay wait or launch, so they fail while
  // capturing. Why: replaying a step's ~40 kernels as one graph launch removes their
  // per-launch host cost from every tick (docs/serving.md, "Decode graphs"). CUDA and
  // the CPU support it (the CPU records closures, so the model's tests check on any
  // machine that a step replays correctly); Unimplemented by default.
  virtual bool SupportsCapture() const { return false; }
  virtual absl::Status BeginCapture() { return absl::UnimplementedError("no capture"); }
  // Ends the capture begun by this thread. After an error inside the capture, call it
  // anyway: it leaves capture mode and its result is discarded.
  virtual absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() {
    return absl::UnimplementedError("no capture");
  }
  virtual absl::Status Replay(const CapturedWork& work) {
    return absl::UnimplementedError("no capture");
  }
};

// device: "cpu", "cuda" or "auto" (CUDA when a GPU is present and the build has
// CUDA, else CPU). Asking for "cuda" without a GPU is an error, never a fallback.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const std::string& device,
                                                       const BackendOptions& options = {});

// True when this build has CUDA and a usable GPU is present.
bool CudaAvailable();

// How many devices of `kind` this process can place work on: 1 for the CPU; the
// visible CUDA GPUs (0 in a build without CUDA). Layers above kernels/ ask here, never
// kernels/cuda/ itself.
int DeviceCount(DeviceKind kind);

}  // namespace flashtick
