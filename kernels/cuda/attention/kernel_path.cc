// Placeholder kernel-path naming until the Flash kernels land.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

std::string AttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx) {
  return absl::StrCat("flash_cuda_sm", ctx.sm, "_d", head_dim);
}

}  // namespace flashtick::cuda
