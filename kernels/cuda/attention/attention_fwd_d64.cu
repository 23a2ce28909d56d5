// Forward instantiations for head dim 64: bf16/fp16 × causal/non-causal.
// Tiles 128×128 with 4 warps (32 query rows per warp): FlashAttention-2's measured
// choice for d = 64 on A100/H100 (flash_fwd_launch_template.h, run_mha_fwd_hdim64);
// not yet re-measured for flashtick.
#include "kernels/cuda/attention/flash_fwd_kernel.cuh"

namespace flashtick::cuda::flash {

using FwdTraitsD64 = FlashFwdTraits</*kHeadDim=*/64, /*kBlockM=*/128, /*kBlockN=*/128, /*kNWarps=*/4>;

template <>
cudaError_t LaunchFlashFwd<64>(const AttentionFwdParams& p, cudaStream_t stream) {
  return RunFlashFwd<FwdTraitsD64>(p, stream);
}

template <>
const char* FlashFwdVariant<64>() {
  return "fwd_d64_m128n128w4";
}

}  // namespace flashtick::cuda::flash
