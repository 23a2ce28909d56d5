// Dvec = rowsum(dO∘O) alone (attention_dvec.cu), reading p.o, p.dout and writing p.dvec
// (fp32 [B, H, T]); for a backward that does not write Dvec itself (cuDNN's,
// cudnn_sdpa.cc). D ∈ {64, 128}. Host-visible.
#pragma once

#include "kernels/cuda/attention/flash_params.h"

namespace flashtick::cuda::flash {

cudaError_t LaunchAttentionDvec(const AttentionBwdParams& p, cudaStream_t stream);

}  // namespace flashtick::cuda::flash
