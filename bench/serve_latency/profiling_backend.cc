// ProfilingBackend (profiling_backend.h): a mark before each forwarded call.
#include "bench/serve_latency/profiling_backend.h"

#include "common/status_macros.h"

namespace flashtick::bench {
namespace {

const char* CopyKind(DeviceKind dst, DeviceKind src) {
  if (src == DeviceKind::kCpu && dst != DeviceKind::kCpu) return "copy to device";
  if (src != DeviceKind::kCpu && dst == DeviceKind::kCpu) return "copy to host";
  return "copy";
}

}  // namespace

absl::Status ProfilingBackend::Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                                   absl::Span<const TensorView> outputs) {
  RETURN_IF_ERROR(profiler_.Mark("forward", OpName(desc.op)));
  return inner_->Run(desc, inputs, outputs);
}

absl::Status ProfilingBackend::Copy(void* dst, DeviceKind dst_device, const void* src,
                                    DeviceKind src_device, size_t bytes) {
  RETURN_IF_ERROR(profiler_.Mark("forward", CopyKind(dst_device, src_device)));
  return inner_->Copy(dst, dst_device, src, src_device, bytes);
}

absl::Status ProfilingBackend::CopyAsync(void* dst, DeviceKind dst_device, const void* src,
                                         DeviceKind src_device, size_t bytes) {
  RETURN_IF_ERROR(profiler_.Mark("forward", CopyKind(dst_device, src_device)));
  return inner_->CopyAsync(dst, dst_device, src, src_device, bytes);
}

absl::Status ProfilingBackend::Synchronize() {
  RETURN_IF_ERROR(profiler_.Mark("forward", "synchronize"));
  return inner_->Synchronize();
}

}  // namespace flashtick::bench
