// Host side of the sm_90a attention forward (flash_fwd_sm90.cuh; compiled for sm_90a
// alone, attention_fwd_sm90.cu). Run when the attention mode is flash_sm90a
// (kernels/attention_dispatch.h) and the call fits it; ours (FA2) runs the rest.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/attention/flash_params.h"
#include "kernels/tensor.h"

namespace flashtick::cuda::sm90 {

// D = 64 or 128, bf16 or fp16, on a compute-capability 9.0 device (sm = 90): the only
// shapes its kernel is built for and the only GPU its sm_90a code runs on.
bool FlashFwdSm90Runs(int head_dim, DType dtype, int sm);

// The variant's tiles at `head_dim`, for Backend::KernelPath
// (flash_cuda_fwd_d64_m128n64wg2_sm90a).
flash::FlashFwdTiles FlashFwdSm90TileShape(int head_dim);

// Enqueues the forward for p (p.num_splits is ignored: no split-KV yet).
cudaError_t LaunchFlashFwdSm90(const flash::AttentionFwdParams& p, cudaStream_t stream);

}  // namespace flashtick::cuda::sm90
