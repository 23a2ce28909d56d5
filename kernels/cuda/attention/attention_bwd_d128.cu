// Backward instantiations for head dim 128: bf16/fp16 × causal/non-causal.
// 128 keys per CTA, 64-row query blocks, 8 warps: S/dP on a 2×4 warp grid (32×32 per
// warp), dK/dV on 4×2 (32×64: 128 accumulator registers for the pair), dQ on 2×4
// (32×32); 160 KB of shared memory, one CTA per SM. FlashAttention-2's sm_80 choice for
// d = 128 (run_mha_bwd_hdim128); not yet re-measured for flashtick.
#include "kernels/cuda/attention/flash_bwd_launch.cuh"

namespace flashtick::cuda::flash {

using BwdTraitsD128 = FlashBwdTraits</*kHeadDim=*/128, /*kBlockM=*/64, /*kBlockN=*/128, /*kNWarps=*/8,
                                     /*kWarpsMSdP=*/2, /*kWarpsNdKV=*/4, /*kWarpsMdQ=*/2>;

template <>
cudaError_t LaunchFlashBwd<128>(const AttentionBwdParams& p, cudaStream_t stream) {
  return RunFlashBwd<BwdTraitsD128>(p, stream);
}

template <>
const char* FlashBwdVariant<128>() {
  return "bwd_d128_m64n128w8";
}

}  // namespace flashtick::cuda::flash
