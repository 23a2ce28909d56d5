// Host launcher of the CUDA attention forward (Op::kAttentionFwd): validates the
// contract of kernels/ops/attention.h and the kernels' layout needs, fills
// AttentionFwdParams and enqueues the head-dim variant (attention_fwd_d{64,128,256}.cu;
// head dims 16, 32, 96 run zero-padded on the 64/128 ones, head_dim_padding.h).
// In: Q [B,T,H,D], K, V [B,T,Hkv,D] (bf16/fp16). Out: O [B,T,H,D], L fp32 [B,H,T].
// Small B·H at long T runs split-KV with fp32 partials from the context's scratch. In the
// flash_sm90a mode, D = 64 or 128 on a compute-capability 9.0 GPU runs the wgmma kernel instead
// (kernels/cuda/attention/sm90/).
#include <algorithm>
#include <memory>

#include "common/status_macros.h"
#include "kernels/common/dispatch.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/attention/head_dim_padding.h"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

absl::Status FlashAttentionFwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RETURN_IF_ERROR(CheckAttentionArity(Op::kAttentionFwd, in.size(), out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], &s));
  const DType dt = in[0].dtype;
  RETURN_IF_ERROR(flash::CheckFlashVariant("attention_fwd", s, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("O", out[0], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("L", out[1], s, DType::kF32));
  RETURN_IF_ERROR(flash::CheckFlashLayout("Q", in[0]));
  RETURN_IF_ERROR(flash::CheckFlashLayout("K", in[1]));
  RETURN_IF_ERROR(flash::CheckFlashLayout("V", in[2]));
  RETURN_IF_ERROR(flash::CheckFlashLayout("O", out[0]));
  if (out[1].device != DeviceKind::kCuda)
    return absl::InvalidArgumentError("flash_cuda: L is not on the GPU");
  if (flash::FlashKernelHeadDim(s.D) != s.D)  // 16, 32, 96: on the 64/128 kernels, zero-padded
    return RunWithPaddedHeadDim(desc, in, out, ctx, s.D, &FlashAttentionFwd);

  flash::AttentionFwdParams p;
  p.q = flash::ToArg(in[0]);
  p.k = flash::ToArg(in[1]);
  p.v = flash::ToArg(in[2]);
  p.o = flash::ToArg(out[0]);
  p.lse = out[1].as<float>();
  p.B = static_cast<int>(s.B), p.T = static_cast<int>(s.T), p.H = static_cast<int>(s.H);
  p.Hkv = static_cast<int>(s.Hkv), p.D = static_cast<int>(s.D), p.group = p.H / p.Hkv;
  RETURN_IF_ERROR(flash::FlashScale(desc.attention, s.D, &p.scale, &p.scale_log2));
  p.causal = desc.attention.causal;
  p.dtype = dt;
  if (FlashSm90aAsked() && sm90::FlashFwdSm90Runs(p.D, dt, ctx.sm)) {
    RETURN_IF_CUDA_ERROR(sm90::LaunchFlashFwdSm90(p, ctx.stream));  // wgmma, no split-KV yet
    return absl::OkStatus();
  }
  // Split-KV when B·H query blocks would leave the GPU idle (FlashFwdNumSplits), or
  // the count the backend was created with (CudaContext::fwd_splits, a benchmark's A/B).
  const flash::FlashFwdTiles tiles =
      HEADDIM_SWITCH(s.D, kHeadDim, [&] { return flash::FlashFwdTileShape<kHeadDim>(); });
  p.num_splits = ctx.fwd_splits > 0
                     ? std::min(ctx.fwd_splits, flash::kMaxSplits)
                     : flash::FlashFwdNumSplits(s.B * s.H, s.T, p.causal, tiles, ctx.num_sms);
  std::shared_ptr<void> partials;  // released after the enqueue: the scratch is stream-ordered
  if (tiles.split_kv && p.num_splits > 1 && ctx.scratch) {
    const int64_t key_blocks = (s.T + tiles.block_n - 1) / tiles.block_n;
    p.split_blocks = static_cast<int>((key_blocks + p.num_splits - 1) / p.num_splits);
    p.num_splits = static_cast<int>((key_blocks + p.split_blocks - 1) / p.split_blocks);
    const int64_t rows = int64_t{p.num_splits} * s.B * s.H * s.T;
    ASSIGN_OR_RETURN(partials, ctx.scratch(static_cast<size_t>(rows * (s.D + 1)) * sizeof(float)));
    p.o_part = static_cast<float*>(partials.get());
    p.lse_part = p.o_part + rows * s.D;
  } else {
    p.num_splits = 1;
  }
  const cudaError_t err =
      HEADDIM_SWITCH(s.D, kHeadDim, [&] { return flash::LaunchFlashFwd<kHeadDim>(p, ctx.stream); });
  RETURN_IF_CUDA_ERROR(err);
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
