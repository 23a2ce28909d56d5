// CpuBackend: op dispatch, host memory with usage accounting (backend-wide, and per
// MemoryScope of the allocating thread).
#include "kernels/cpu/cpu_backend.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/common/atomic_max.h"
#include "kernels/common/op_switch.h"
#include "kernels/memory_scope.h"

namespace flashtick::cpu {

CpuBackend::CpuBackend(const BackendOptions& options) : pool_(options.threads) {}

bool CpuBackend::Supports(const OpDesc& desc) const {
  if (desc.op == Op::kCast) return true;
  return desc.dtype == DType::kF32 || desc.dtype == DType::kF64;
}

std::string CpuBackend::KernelPath(const OpDesc& desc) const { return "cpu_reference"; }

// One recorded call of a capture: the work, kept until replay (views by value; the
// buffers they point at must outlive the recording).
class CpuRecording final : public CapturedWork {
 public:
  explicit CpuRecording(std::vector<std::function<absl::Status()>> calls)
      : calls(std::move(calls)) {}
  std::vector<std::function<absl::Status()>> calls;
};

bool CpuBackend::CapturingHere() {
  if (!capture_open_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(capture_mu_);
  return capture_thread_ == std::this_thread::get_id();
}

bool CpuBackend::Record(Recorded fn) {
  if (!capture_open_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(capture_mu_);
  if (capture_thread_ != std::this_thread::get_id()) return false;
  recording_.push_back(std::move(fn));
  return true;
}

absl::Status CpuBackend::BeginCapture() {
  std::lock_guard<std::mutex> lock(capture_mu_);
  if (capture_thread_ != std::thread::id())
    return absl::FailedPreconditionError("cpu_reference: a capture is already open");
  capture_thread_ = std::this_thread::get_id();
  capture_open_.store(true, std::memory_order_release);
  recording_.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CapturedWork>> CpuBackend::EndCapture() {
  std::lock_guard<std::mutex> lock(capture_mu_);
  if (capture_thread_ != std::this_thread::get_id())
    return absl::FailedPreconditionError("cpu_reference: this thread has no open capture");
  capture_thread_ = std::thread::id();
  capture_open_.store(false, std::memory_order_release);
  return std::unique_ptr<CapturedWork>(new CpuRecording(std::move(recording_)));
}

absl::Status CpuBackend::Replay(const CapturedWork& work) {
  if (CapturingHere())
    return absl::FailedPreconditionError("cpu_reference: Replay while capturing");
  const auto* rec = dynamic_cast<const CpuRecording*>(&work);
  if (rec == nullptr)
    return absl::InvalidArgumentError("cpu_reference: Replay of another backend's capture");
  for (const auto& call : rec->calls) RETURN_IF_ERROR(call());
  return absl::OkStatus();
}

absl::Status CpuBackend::Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                             absl::Span<const TensorView> outputs) {
  // Checked before a call is run or recorded (as the CUDA backend checks its arguments
  // while capturing); a replay runs what was checked.
  if (!Supports(desc)) {
    return absl::UnimplementedError(
        absl::StrCat("cpu_reference has no ", desc.DebugString(), "; use fp32 or fp64"));
  }
  if (CapturingHere()) {
    Record([this, desc, in = std::vector<TensorView>(inputs.begin(), inputs.end()),
            out = std::vector<TensorView>(outputs.begin(), outputs.end())] {
      return RunNow(desc, in, out);
    });
    return absl::OkStatus();
  }
  return RunNow(desc, inputs, outputs);
}

absl::Status CpuBackend::RunNow(const OpDesc& desc, absl::Span<const TensorView> inputs,
                                absl::Span<const TensorView> outputs) {
  for (const auto& t : inputs) {
    if (t.data != nullptr && t.device != DeviceKind::kCpu)
      return absl::InvalidArgumentError(
          absl::StrCat(OpName(desc.op), ": input ", t.DebugString(), " is not on the CPU"));
  }
  CpuContext ctx{&pool_};
  return RunOpFunction("cpu_reference", desc, inputs, outputs, ctx);
}

absl::StatusOr<std::shared_ptr<void>> CpuBackend::Allocate(size_t bytes) {
  // 64-byte alignment: whole cache lines, and room for AVX-512 loads.
  constexpr size_t kAlign = 64;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (p == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat("host allocation of ", bytes, " bytes failed"));
  auto counters = counters_;
  RaiseToAtLeast(counters->peak,
                 counters->used.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes));
  // The calling thread's open scopes count it too; the free credits the same scopes.
  const MemoryCharge charge = MemoryCharge::Charge(memory_domain(), static_cast<int64_t>(bytes));
  return std::shared_ptr<void>(p, [counters, charge, bytes](void* q) {
    counters->used.fetch_sub(static_cast<int64_t>(bytes));
    charge.Release();
    std::free(q);
  });
}

absl::Status CpuBackend::Copy(void* dst, DeviceKind dst_device, const void* src,
                              DeviceKind src_device, size_t bytes) {
  if (CapturingHere())
    return absl::FailedPreconditionError(
        "cpu_reference: Copy waits, so it cannot be captured; use CopyAsync");
  return CopyNow(dst, dst_device, src, src_device, bytes);
}

absl::Status CpuBackend::CopyAsync(void* dst, DeviceKind dst_device, const void* src,
                                   DeviceKind src_device, size_t bytes) {
  if (Record([=, this] { return CopyNow(dst, dst_device, src, src_device, bytes); }))
    return absl::OkStatus();
  return CopyNow(dst, dst_device, src, src_device, bytes);
}

absl::Status CpuBackend::Synchronize() {
  if (CapturingHere())
    return absl::FailedPreconditionError("cpu_reference: Synchronize while capturing");
  return absl::OkStatus();
}

absl::Status CpuBackend::CopyNow(void* dst, DeviceKind dst_device, const void* src,
                                 DeviceKind src_device, size_t bytes) {
  if (dst_device != DeviceKind::kCpu || src_device != DeviceKind::kCpu)
    return absl::InvalidArgumentError("cpu_reference copies only between host buffers");
  if (bytes) std::memmove(dst, src, bytes);
  return absl::OkStatus();
}

absl::Status CpuBackend::Zero(void* dst, size_t bytes) {
  if (Record([=] {
        if (bytes) std::memset(dst, 0, bytes);
        return absl::OkStatus();
      }))
    return absl::OkStatus();
  if (bytes) std::memset(dst, 0, bytes);
  return absl::OkStatus();
}

MemoryStats CpuBackend::Memory() const {
  return MemoryStats{counters_->used.load(), counters_->peak.load(), 0};
}

void CpuBackend::ResetPeakMemory() { counters_->peak.store(counters_->used.load()); }

absl::StatusOr<int> CpuBackend::RecordMark() {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(marks_mu_);
  marks_.push_back(now);
  return static_cast<int>(marks_.size()) - 1;
}

absl::StatusOr<double> CpuBackend::MarkElapsedMs(int from, int to) {
  std::lock_guard<std::mutex> lock(marks_mu_);
  const int n = static_cast<int>(marks_.size());
  if (from < 0 || to < 0 || from >= n || to >= n)
    return absl::OutOfRangeError(
        absl::StrCat("cpu_reference: marks ", from, " and ", to, " of ", n, " recorded"));
  return std::chrono::duration<double, std::milli>(marks_[to] - marks_[from]).count();
}

void CpuBackend::ResetMarks() {
  std::lock_guard<std::mutex> lock(marks_mu_);
  marks_.clear();
}

}  // namespace flashtick::cpu
