// Forward instantiations for head dim 128: bf16/fp16 × causal/non-causal.
// Tiles 128×64 with 4 warps: FlashAttention-2's choice for d = 128 on sm_80/sm_90
// (run_mha_fwd_hdim128; the 64-key step keeps S at 64 registers per thread beside
// the 128 of the O accumulator). 64 KB of shared memory, two CTAs per SM.
#include "kernels/cuda/attention/flash_fwd_kernel.cuh"

namespace flashtick::cuda::flash {

using FwdTraitsD128 = FlashFwdTraits</*kHeadDim=*/128, /*kBlockM=*/128, /*kBlockN=*/64, /*kNWarps=*/4>;

template <>
cudaError_t LaunchFlashFwd<128>(const AttentionFwdParams& p, cudaStream_t stream) {
  return RunFlashFwd<FwdTraitsD128>(p, stream);
}

template <>
const char* FlashFwdVariant<128>() {
  return "fwd_d128_m128n64w4";
}

}  // namespace flashtick::cuda::flash
