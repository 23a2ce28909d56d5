// Backward instantiations for head dim 64: bf16/fp16 × causal/non-causal.
// 128 keys per CTA, 128-row query blocks, 8 warps: S/dP on a 2×4 warp grid (64×32 per
// warp), dK/dV on 4×2 (32×32), dQ on 4×2 (32×32); 160 KB of shared memory, one CTA
// per SM. FlashAttention-2's sm_80 choice for d = 64 when 144 KB+ of shared memory is
// available (run_mha_bwd_hdim64); not yet re-measured for flashtick.
#include "kernels/cuda/attention/flash_bwd_launch.cuh"

namespace flashtick::cuda::flash {

using BwdTraitsD64 = FlashBwdTraits</*kHeadDim=*/64, /*kBlockM=*/128, /*kBlockN=*/128, /*kNWarps=*/8,
                                    /*kWarpsMSdP=*/2, /*kWarpsNdKV=*/4, /*kWarpsMdQ=*/4>;

template <>
cudaError_t LaunchFlashBwd<64>(const AttentionBwdParams& p, cudaStream_t stream) {
  return RunFlashBwd<BwdTraitsD64>(p, stream);
}

template <>
const char* FlashBwdVariant<64>() {
  return "bwd_d64_m128n128w8";
}

}  // namespace flashtick::cuda::flash
