// Host launcher for BiasGrad on CUDA (kernels/ops/bias_grad.h): db = Σ_rows dY in fp32
// through the deterministic two-pass column reduction of bias_grad.cu.
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch_util.h"
#include "kernels/ops/bias_grad.h"

namespace flashtick::cuda {

absl::Status BiasGrad(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RowLayout r;
  RETURN_IF_ERROR(CheckBiasGradArgs(desc, in, out, &r));
  if (r.cols == 0) return absl::OkStatus();
  const RowArg dy = Arg(in[0], r);
  ASSIGN_OR_RETURN(std::shared_ptr<void> scratch,
                   ScratchFloats(ctx, BiasGradScratchFloats(desc.dtype, r.rows, r.cols, dy,
                                                            ctx.num_sms)));
  RETURN_IF_CUDA_ERROR(LaunchBiasGrad(desc.dtype, r.rows, r.cols, dy, out[0].as<float>(),
                                      static_cast<float*>(scratch.get()), ctx.num_sms,
                                      ctx.stream));
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
