// Forward instantiations for head dim 128 (bf16/fp16 × causal/non-causal) with the
// traits of flash_variants.cuh.
#include "kernels/cuda/attention/flash_variants.cuh"

namespace flashtick::cuda::flash {

template <>
cudaError_t LaunchFlashFwd<128>(const AttentionFwdParams& p, cudaStream_t stream) {
  return RunFlashFwd<FwdTraitsD128>(p, stream);
}

template <>
const char* FlashFwdVariant<128>() {
  return "fwd_d128_m128n64w4_splitkv";
}

template <>
FlashFwdTiles FlashFwdTileShape<128>() {
  return {FwdTraitsD128::kBlockM, FwdTraitsD128::kBlockN, FwdTraitsD128::kMinBlocksPerSm};
}

}  // namespace flashtick::cuda::flash
