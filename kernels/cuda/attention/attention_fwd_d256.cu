// Forward instantiations for head dim 256 (bf16/fp16 × causal/non-causal) with the
// traits of flash_variants.cuh, and the shape KernelPath reads off the same traits.
#include "kernels/cuda/attention/flash_variants.cuh"

namespace flashtick::cuda::flash {

template cudaError_t LaunchFlashFwd<256>(const AttentionFwdParams& p, cudaStream_t stream);
template FlashFwdTiles FlashFwdTileShape<256>();

}  // namespace flashtick::cuda::flash
