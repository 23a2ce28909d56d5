// Decode instantiations (bf16/fp16 × head dim 16, 32, 64, 96, 128, 256) of
// flash_decode_kernel.cuh: decode is bandwidth-bound FMAs with no tiles, so every head
// dim gets its own kernel rather than a padded one.
#include "kernels/cuda/attention/flash_decode_kernel.cuh"

namespace flashtick::cuda::flash {

template <>
cudaError_t LaunchFlashDecode<16>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<16>(p, stream);
}

template <>
cudaError_t LaunchFlashDecode<32>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<32>(p, stream);
}

template <>
cudaError_t LaunchFlashDecode<96>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<96>(p, stream);
}

template <>
cudaError_t LaunchFlashDecode<64>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<64>(p, stream);
}

template <>
cudaError_t LaunchFlashDecode<128>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<128>(p, stream);
}

template <>
cudaError_t LaunchFlashDecode<256>(const AttentionDecodeParams& p, cudaStream_t stream) {
  return RunFlashDecode<256>(p, stream);
}

}  // namespace flashtick::cuda::flash
