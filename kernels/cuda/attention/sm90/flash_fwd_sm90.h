// Host side of the sm_90a attention forward, backward and backward-over-backward
// (flash_fwd_sm90.cuh, flash_bwd_sm90.cuh, bob_sm90.cuh; compiled for sm_90a alone,
// attention_{fwd,bwd,bwd_bwd}_sm90.cu). The forward and backward run when the attention
// mode is flash_sm90a (kernels/attention_dispatch.h) and the call fits them, the
// backward-over-backward wherever BobSm90Chosen (kernels/cuda/cuda_ops.h) says; ours
// (FA2) runs the rest.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/attention/bwd_bwd/bob_params.h"
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
// FLASHTICK_SM90_FWD=overlap: the variant with the softmax overlapped with the previous
// block's P·V (flash_fwd_sm90_overlap_kernel; kernel path suffix _ov). Read once.
bool FlashFwdSm90Overlaps();

// The backward: D = 64, bf16 or fp16, compute capability 9.0.
bool FlashBwdSm90Runs(int head_dim, DType dtype, int sm);
// Its tiles (block_m: query rows a streamed block; block_n: keys a CTA), for KernelPath
// (flash_cuda_bwd_d64_m64n128wg2_sm90a).
flash::FlashBwdTiles FlashBwdSm90TileShape();
// Enqueues the D pre-pass, the wgmma main kernel and the dQ conversion (p.dq_accum: the
// caller's fp32 [B, T, H, D] scratch, zeroed by the pre-pass).
cudaError_t LaunchFlashBwdSm90(const flash::AttentionBwdParams& p, cudaStream_t stream);

// The backward-over-backward (bob_sm90.cuh): D = 64, bf16 or fp16, compute capability 9.0.
bool BobSm90Runs(int head_dim, DType dtype, int sm);
// Its pass-1 tiles (block_m: query rows a CTA; block_n: keys a step; warps), for
// KernelPath (flash_cuda_bwd_bwd_d64_m64n64wg2_sm90a); pass 2 holds 128 keys a CTA.
BobTiles BobSm90TileShape();
// Enqueues pass 1 then pass 2 (p.c, p.e: the caller's fp32 [B, H, T] row states).
cudaError_t LaunchBobSm90(const BobParams& p, DType dtype, cudaStream_t stream);
// Which score-GEMM A operands the passes read from registers instead of shared memory:
// qdo (pass 1's Q and dO; kernel path suffix _qdoreg) and kv (pass 2's K and V; _kvreg).
// Default: both, the fastest on an H200 (docs/kernels/hopper.md); FLASHTICK_BOB_SM90_REGS,
// a comma list of them or none, overrides it. Read once.
struct BobSm90Operands {
  bool qdo = true, kv = true;
};
BobSm90Operands BobSm90RegisterOperands();

}  // namespace flashtick::cuda::sm90
