// Decode instantiations (bf16/fp16 × head dim 64/128) of flash_decode_kernel.cuh.
#include "kernels/cuda/attention/flash_decode_kernel.cuh"

namespace flashtick::cuda::flash {

template <>
cudaError_t LaunchFlashDecode<64>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<64>(p, stream);
}

template <>
cudaError_t LaunchFlashDecode<128>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<128>(p, stream);
}

}  // namespace flashtick::cuda::flash
