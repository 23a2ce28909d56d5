// Host launchers for LayerNormBwd and LayerNormBwdBwd on CUDA
// (kernels/ops/layernorm_bwd.h): shared validation, scratch for the per-row scalars
// and column partials, then the row and column kernels of layernorm_bwd.cu.
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch_util.h"
#include "kernels/ops/layernorm_bwd.h"

namespace flashtick::cuda {
namespace {

absl::Status Run(bool bwd_bwd, const OpDesc& desc, const LayerNormBwdParams& p,
                 CudaContext& ctx) {
  if (p.cols == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<void> scratch,
                   ScratchFloats(ctx, LayerNormBwdScratchFloats(bwd_bwd, desc.dtype, p,
                                                                ctx.num_sms)));
  float* s = static_cast<float*>(scratch.get());
  RETURN_IF_CUDA_ERROR(bwd_bwd ? LaunchLayerNormBwdBwd(desc.dtype, p, s, ctx.num_sms, ctx.stream)
                               : LaunchLayerNormBwd(desc.dtype, p, s, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

}  // namespace

// in: X, γ, dY   out: dX, dγ, dβ
absl::Status LayerNormBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  LayerNormBwdLayout l;
  RETURN_IF_ERROR(CheckLayerNormBwdArgs(desc, in, out, &l));
  LayerNormBwdParams p;
  p.rows = l.M;
  p.cols = l.C;
  p.eps = desc.layernorm.eps;
  p.x = Arg(in[0], l.x);
  p.gamma = in[1].as<const float>();
  p.dy = Arg(in[2], l.dy);
  p.dx = Arg(out[0], l.dx);
  p.dgamma = out[1].as<float>();
  p.dbeta = out[2].as<float>();
  return Run(false, desc, p, ctx);
}

// in: X, γ, dY, gX, gγ, gβ   out: ∂X, ∂γ, ∂dY
absl::Status LayerNormBwdBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  LayerNormBwdLayout l;
  RETURN_IF_ERROR(CheckLayerNormBwdBwdArgs(desc, in, out, &l));
  LayerNormBwdParams p;
  p.rows = l.M;
  p.cols = l.C;
  p.eps = desc.layernorm.eps;
  p.x = Arg(in[0], l.x);
  p.gamma = in[1].as<const float>();
  p.dy = Arg(in[2], l.dy);
  p.gx = Arg(in[3], l.gx);
  p.g_gamma = in[4].as<const float>();
  p.g_beta = in[5].as<const float>();
  p.dx = Arg(out[0], l.dx2);
  p.dgamma = out[1].as<float>();
  p.ddy = Arg(out[2], l.ddy);
  return Run(true, desc, p, ctx);
}

}  // namespace flashtick::cuda
