// Host launchers for AddBias, Add and Cast on CUDA (kernels/ops/elementwise.h): shared
// validation, then one elementwise kernel (elementwise.cu). fp32 math; bias fp32.
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch_util.h"
#include "kernels/ops/elementwise.h"

namespace flashtick::cuda {

absl::Status AddBias(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RowLayout rows[2];
  RETURN_IF_ERROR(CheckAddBiasArgs(desc, in, out, rows));
  MapParams p;
  p.rows = rows[0].rows;
  p.cols = rows[0].cols;
  p.t[0] = Arg(in[0], rows[0]);
  p.t[1] = Arg(out[0], rows[1]);
  p.bias = in[1].as<const float>();  // ParamDType: fp32 for every CUDA activation dtype
  RETURN_IF_CUDA_ERROR(LaunchRowMap(MapOp::kAddBias, desc.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

absl::Status Add(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RowLayout rows[3];
  RETURN_IF_ERROR(CheckAddArgs(desc, in, out, rows));
  MapParams p;
  p.rows = rows[0].rows;
  p.cols = rows[0].cols;
  p.t[0] = Arg(in[0], rows[0]);
  p.t[1] = Arg(in[1], rows[1]);
  p.t[2] = Arg(out[0], rows[2]);
  RETURN_IF_CUDA_ERROR(LaunchRowMap(MapOp::kAdd, desc.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

absl::Status Cast(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RowLayout rows[2];
  RETURN_IF_ERROR(CheckCastArgs(desc, in, out, rows));
  const TensorView &x = in[0], &y = out[0];
  if (SameView(x, y)) return absl::OkStatus();  // same dtype, in place: nothing to do
  RETURN_IF_CUDA_ERROR(LaunchCast(x.dtype, y.dtype, rows[0].rows, rows[0].cols, Arg(x, rows[0]),
                                  Arg(y, rows[1]), ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
