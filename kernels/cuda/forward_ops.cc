// Host launchers for the row-wise forward ops on CUDA: LayerNorm (kernels/ops/layernorm.h),
// Gelu (gelu.h), Softmax (softmax.h) and Rope (rope.h). Each runs the shared argument
// check, then one kernel (layernorm.cu, elementwise.cu, softmax.cu, rope.cu). fp32 math;
// parameter-shaped tensors (γ, β, mean, rstd) fp32.
#include <cmath>

#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch_util.h"
#include "kernels/ops/gelu.h"
#include "kernels/ops/layernorm.h"
#include "kernels/ops/rope.h"
#include "kernels/ops/softmax.h"

namespace flashtick::cuda {

// in: X, γ, β   out: Y, mean, rstd
absl::Status LayerNorm(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RowLayout rx, ry;
  RETURN_IF_ERROR(CheckLayerNormArgs(desc, in, out, &rx, &ry));
  LayerNormParams p;
  p.rows = rx.rows;
  p.cols = rx.cols;
  p.eps = desc.layernorm.eps;
  p.x = Arg(in[0], rx);
  p.y = Arg(out[0], ry);
  p.gamma = in[1].as<const float>();
  p.beta = in[2].as<const float>();
  p.mean = out[1].as<float>();
  p.rstd = out[2].as<float>();
  RETURN_IF_CUDA_ERROR(LaunchLayerNorm(desc.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

// in: X   out: Y
absl::Status Gelu(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RowLayout rx, ry;
  RETURN_IF_ERROR(CheckUnaryRowArgs("gelu", desc, in, out, &rx, &ry));
  MapParams p;
  p.rows = rx.rows;
  p.cols = rx.cols;
  p.t[0] = Arg(in[0], rx);
  p.t[1] = Arg(out[0], ry);
  RETURN_IF_CUDA_ERROR(LaunchRowMap(MapOp::kGelu, desc.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

// in: X   out: Y
absl::Status Softmax(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RowLayout rx, ry;
  RETURN_IF_ERROR(CheckUnaryRowArgs("softmax", desc, in, out, &rx, &ry));
  RETURN_IF_CUDA_ERROR(LaunchSoftmax(desc.dtype, rx.rows, rx.cols, Arg(in[0], rx),
                                     Arg(out[0], ry), ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

// in: X [B, T, H, D] [, position int32]   out: Y [B, T, H, D]
absl::Status Rope(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RopeShape s;
  RETURN_IF_ERROR(CheckRopeArgs(desc, in, out, &s));
  RopeParams p;
  p.B = s.B;
  p.T = s.T;
  p.H = s.H;
  p.D = s.D;
  p.R = s.R;
  p.x = in[0].data;
  p.y = out[0].data;
  for (int d = 0; d < 3; ++d) p.xs[d] = in[0].stride(d), p.ys[d] = out[0].stride(d);
  p.position_offset = desc.rope.position_offset;
  if (in.size() == 2) p.position = in[1].as<const int32_t>();
  p.sin_sign = desc.rope.inverse ? -1.0f : 1.0f;
  p.log2_theta = std::log2(static_cast<double>(desc.rope.theta));
  RETURN_IF_CUDA_ERROR(LaunchRope(desc.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
