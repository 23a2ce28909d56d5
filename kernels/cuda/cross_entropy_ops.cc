// Host launchers for the softmax cross-entropy ops on CUDA (kernels/ops/cross_entropy.h):
// shared validation, then the warp-per-row kernel of cross_entropy.cu. Labels stay on
// the GPU and are not inspected here; a label outside [0, K) gives its row NaN.
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch_util.h"
#include "kernels/ops/cross_entropy.h"

namespace flashtick::cuda {
namespace {

absl::Status Run(int which, const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  CrossEntropyLayout l;
  RETURN_IF_ERROR(CheckSoftmaxCrossEntropyArgs(desc, in, out, &l));
  CrossEntropyParams p;
  p.rows = l.M;
  p.classes = l.K;
  p.ignore_label = desc.cross_entropy.ignore_label;
  p.logits = Arg(in[0], l.logits);
  p.labels = in[1].as<const int32_t>();
  switch (which) {
    case 0:  // in: logits, labels   out: loss
      p.loss = out[0].as<float>();
      break;
    case 1:  // in: logits, labels, dloss   out: dlogits
      p.dloss = in[2].as<const float>();
      p.dlogits = Arg(out[0], l.rows2);
      break;
    default:  // in: logits, labels, dloss, g   out: ∂logits, ∂dloss
      p.dloss = in[2].as<const float>();
      p.g = Arg(in[3], l.rows2);
      p.dlogits = Arg(out[0], l.rows3);
      p.loss = out[1].as<float>();
      break;
  }
  RETURN_IF_CUDA_ERROR(LaunchSoftmaxCrossEntropy(which, desc.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

}  // namespace

absl::Status SoftmaxCrossEntropy(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  return Run(0, desc, in, out, ctx);
}
absl::Status SoftmaxCrossEntropyBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  return Run(1, desc, in, out, ctx);
}
absl::Status SoftmaxCrossEntropyBwdBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  return Run(2, desc, in, out, ctx);
}

}  // namespace flashtick::cuda
