// Host launchers for the GELU (tanh) backward ops on CUDA (kernels/ops/gelu_bwd.h):
// shared validation, then the elementwise kernel of elementwise.cu. fp32 math.
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch_util.h"
#include "kernels/ops/gelu_bwd.h"

namespace flashtick::cuda {
namespace {

absl::Status RunMap(MapOp op, const OpDesc& desc, In in, Out out, const GeluBwdLayout& l,
                    CudaContext& ctx) {
  MapParams p;
  p.rows = l.M;
  p.cols = l.C;
  int k = 0;
  for (const TensorView& t : in) p.t[k] = Arg(t, l.rows[k]), ++k;
  for (const TensorView& t : out) p.t[k] = Arg(t, l.rows[k]), ++k;
  RETURN_IF_CUDA_ERROR(LaunchRowMap(op, desc.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

}  // namespace

absl::Status GeluBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  GeluBwdLayout l;
  RETURN_IF_ERROR(CheckGeluBwdArgs(desc, in, out, &l));
  return RunMap(MapOp::kGeluBwd, desc, in, out, l, ctx);
}

absl::Status GeluBwdBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  GeluBwdLayout l;
  RETURN_IF_ERROR(CheckGeluBwdBwdArgs(desc, in, out, &l));
  return RunMap(MapOp::kGeluBwdBwd, desc, in, out, l, ctx);
}

}  // namespace flashtick::cuda
