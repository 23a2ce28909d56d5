// Host launcher of the CUDA attention backward (Op::kAttentionBwd): validates, takes a
// stream-ordered fp32 dQ accumulator [B, T, H, D] from the context's scratch (O(T)
// memory), fills AttentionBwdParams and enqueues the head-dim variant
// (attention_bwd_d{64,128,256}.cu: D pre-pass, dK/dV kernel with dQ atomics, dQ convert;
// head dims 16, 32, 96 run zero-padded on those, head_dim_padding.h).
// In: Q, K, V, O, dO, L. Out: dQ, dK, dV, Dvec (fp32 [B, H, T]). In the flash_sm90a
// mode, D = 64 on a compute-capability 9.0 GPU runs the wgmma main kernel
// (kernels/cuda/attention/sm90/) between the same pre-pass and conversion.
#include "common/status_macros.h"
#include "kernels/common/dispatch.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/attention/head_dim_padding.h"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

absl::Status FlashAttentionBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RETURN_IF_ERROR(CheckAttentionArity(Op::kAttentionBwd, in.size(), out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], &s));
  const DType dt = in[0].dtype;
  RETURN_IF_ERROR(flash::CheckFlashVariant("attention_bwd", s, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("O", in[3], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dO", in[4], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("L", in[5], s, DType::kF32));
  RETURN_IF_ERROR(CheckAttentionTensor("dQ", out[0], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dK", out[1], s.B, s.T, s.Hkv, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dV", out[2], s.B, s.T, s.Hkv, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("Dvec", out[3], s, DType::kF32));
  const char* names[] = {"Q", "K", "V", "O", "dO"};
  for (int i = 0; i < 5; ++i) RETURN_IF_ERROR(flash::CheckFlashLayout(names[i], in[i]));
  const char* out_names[] = {"dQ", "dK", "dV"};
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(flash::CheckFlashLayout(out_names[i], out[i]));
  if (in[5].device != DeviceKind::kCuda || out[3].device != DeviceKind::kCuda)
    return absl::InvalidArgumentError("flash_cuda: L and Dvec must be on the GPU");
  if (!ctx.scratch)
    return absl::FailedPreconditionError("flash_cuda: attention_bwd needs the context's scratch allocator");
  if (flash::FlashKernelHeadDim(s.D) != s.D)  // 16, 32, 96: on the 64/128 kernels, zero-padded
    return RunWithPaddedHeadDim(desc, in, out, ctx, s.D, &FlashAttentionBwd);

  // dQ accumulator: B·T·H·D fp32, freed on the stream after the kernels that use it.
  ASSIGN_OR_RETURN(std::shared_ptr<void> dq_accum,
                   ctx.scratch(static_cast<size_t>(s.B * s.T * s.H * s.D) * sizeof(float)));
  flash::AttentionBwdParams p;
  p.q = flash::ToArg(in[0]);
  p.k = flash::ToArg(in[1]);
  p.v = flash::ToArg(in[2]);
  p.o = flash::ToArg(in[3]);
  p.dout = flash::ToArg(in[4]);
  p.lse = in[5].as<const float>();
  p.dq = flash::ToArg(out[0]);
  p.dk = flash::ToArg(out[1]);
  p.dv = flash::ToArg(out[2]);
  p.dvec = out[3].as<float>();
  p.dq_accum = static_cast<float*>(dq_accum.get());
  p.B = static_cast<int>(s.B), p.T = static_cast<int>(s.T), p.H = static_cast<int>(s.H);
  p.Hkv = static_cast<int>(s.Hkv), p.D = static_cast<int>(s.D), p.group = p.H / p.Hkv;
  RETURN_IF_ERROR(flash::FlashScale(desc.attention, s.D, &p.scale, &p.scale_log2));
  p.causal = desc.attention.causal;
  p.dtype = dt;
  if (FlashSm90aAsked() && sm90::FlashBwdSm90Runs(p.D, dt, ctx.sm)) {
    RETURN_IF_CUDA_ERROR(sm90::LaunchFlashBwdSm90(p, ctx.stream));  // wgmma main kernel
    return absl::OkStatus();
  }
  const cudaError_t err =
      HEADDIM_SWITCH(s.D, kHeadDim, [&] { return flash::LaunchFlashBwd<kHeadDim>(p, ctx.stream); });
  RETURN_IF_CUDA_ERROR(err);
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
