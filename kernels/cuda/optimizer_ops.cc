// Host launchers for AdamW and Sophia-H on CUDA (kernels/ops/optimizer.h): shared
// validation, host scalars computed exactly as the CPU reference computes them
// (kernels/common/optimizer_scalars.h: fp64, rounded once to fp32), then the elementwise
// kernel of optimizer.cu. fp32 master weights only.
#include "common/status_macros.h"
#include "kernels/common/optimizer_scalars.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops/optimizer.h"

namespace flashtick::cuda {
namespace {

absl::Status Run(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  int64_t n = 0;
  bool has_hhat = false;
  RETURN_IF_ERROR(CheckOptimizerArgs(desc, in, out, &n, &has_hhat));
  if (desc.dtype != DType::kF32)
    return absl::UnimplementedError(absl::StrCat("flash_cuda ", OpName(desc.op),
                                                 " keeps fp32 master weights; got ",
                                                 DTypeName(desc.dtype)));
  const OptimizerScalars<float> s(desc.optimizer);
  const OptimizerScalarsF32 k{s.grad_scale, s.b1,  s.omb1,  s.b2,    s.omb2, s.lr,
                              s.eps,        s.rho, s.decay, s.bc1,   s.bc2};
  OptimizerParams p;
  p.n = n;
  p.grad = in[0].as<const float>();
  p.hhat = has_hhat ? in[1].as<const float>() : nullptr;
  p.param = out[0].as<float>();
  p.m = out[1].as<float>();
  p.v = out[2].as<float>();
  RETURN_IF_CUDA_ERROR(desc.op == Op::kAdamW ? LaunchAdamW(p, k, ctx.num_sms, ctx.stream)
                                             : LaunchSophiaH(p, k, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

}  // namespace

// in: grad   out (read-modify-write): param, m, v
absl::Status AdamW(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  return Run(desc, in, out, ctx);
}

// in: grad, ĥ (data == nullptr: no Hessian refresh this step)   out: param, m, h
absl::Status SophiaH(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  return Run(desc, in, out, ctx);
}

}  // namespace flashtick::cuda
