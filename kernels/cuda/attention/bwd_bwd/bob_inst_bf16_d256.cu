// Explicit instantiation of the FlashBoB passes for bf16, D = 256 (one file per
// variant so the CUDA build parallelises and a change recompiles only what it touches).
#include "kernels/cuda/attention/bwd_bwd/bob_launch_template.cuh"

namespace flashtick::cuda {
template cudaError_t LaunchBobPasses<DType::kBF16, 256>(const BobParams&, cudaStream_t);
}  // namespace flashtick::cuda
