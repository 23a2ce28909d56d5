// Backward instantiations for head dim 128 (bf16/fp16 × causal/non-causal): the D
// pre-pass, the dK/dV kernel with dQ atomics, and the dQ conversion, with the traits
// of flash_variants.cuh.
#include "kernels/cuda/attention/flash_variants.cuh"

namespace flashtick::cuda::flash {

template <>
cudaError_t LaunchFlashBwd<128>(const AttentionBwdParams& p, cudaStream_t stream) {
  return RunFlashBwd<BwdTraitsD128>(p, stream);
}

template <>
const char* FlashBwdVariant<128>() {
  return "bwd_d128_m64n128w8";
}

}  // namespace flashtick::cuda::flash
