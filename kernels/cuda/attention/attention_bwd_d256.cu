// Backward instantiations for head dim 256 (bf16/fp16 × causal/non-causal): the D
// pre-pass, the dK/dV kernel with dQ atomics, and the dQ conversion, with the traits
// of flash_variants.cuh, and the shape KernelPath reads off the same traits.
#include "kernels/cuda/attention/flash_variants.cuh"

namespace flashtick::cuda::flash {

template cudaError_t LaunchFlashBwd<256>(const AttentionBwdParams& p, cudaStream_t stream);
template FlashBwdTiles FlashBwdTileShape<256>();

}  // namespace flashtick::cuda::flash
