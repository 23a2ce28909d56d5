// Forward instantiations for head dim 64 (bf16/fp16 × causal/non-causal) with the
// traits of flash_variants.cuh.
#include "kernels/cuda/attention/flash_variants.cuh"

namespace flashtick::cuda::flash {

template <>
cudaError_t LaunchFlashFwd<64>(const AttentionFwdParams& p, cudaStream_t stream) {
  return RunFlashFwd<FwdTraitsD64>(p, stream);
}

template <>
const char* FlashFwdVariant<64>() {
  return "fwd_d64_m128n128w4_splitkv";
}

template <>
FlashFwdTiles FlashFwdTileShape<64>() {
  return {FwdTraitsD64::kBlockM, FwdTraitsD64::kBlockN, FwdTraitsD64::kMinBlocksPerSm};
}

}  // namespace flashtick::cuda::flash
