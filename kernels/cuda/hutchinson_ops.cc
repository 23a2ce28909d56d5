// Host launchers for Rademacher and ProbeProduct on CUDA (kernels/ops/hutchinson.h):
// shared validation, then one elementwise kernel (hutchinson.cu). fp32 masters only.
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops/hutchinson.h"

namespace flashtick::cuda {

// out: U
absl::Status Rademacher(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  int64_t n = 0;
  RETURN_IF_ERROR(CheckRademacherArgs(desc, in, out, &n));
  RETURN_IF_CUDA_ERROR(
      LaunchRademacher(out[0].as<float>(), n, desc.probe.seed, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

// in: U, HV, A (read only when β ≠ 0)   out: Y
absl::Status ProbeProduct(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  int64_t n = 0;
  RETURN_IF_ERROR(CheckProbeProductArgs(desc, in, out, &n));
  const float* a = desc.probe.beta != 0.0 ? in[2].as<const float>() : nullptr;
  RETURN_IF_CUDA_ERROR(LaunchProbeProduct(
      in[0].as<const float>(), in[1].as<const float>(), a, out[0].as<float>(), n,
      static_cast<float>(desc.probe.alpha), static_cast<float>(desc.probe.beta), ctx.num_sms,
      ctx.stream));
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
