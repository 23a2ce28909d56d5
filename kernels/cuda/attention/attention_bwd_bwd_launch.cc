// Host launcher of the CUDA attention backward-over-backward (Op::kAttentionBwdBwd):
//   in:  Q, K, V, O, dO, L, Dvec, gQ, gK, gV     out: ∂Q, ∂K, ∂V, ∂dO
// Validates shapes, dtypes (bf16/fp16 data, fp32 statistics), head dim (64, 128, 256;
// 16, 32, 96 run zero-padded on 64 and 128, head_dim_padding.h; FlashBobRunsHeadDim),
// device placement and 16-byte alignment of every row on the host, takes the O(N)
// scratch for the row states c, e (2·B·H·T floats) from the stream-ordered allocator,
// then runs the two FlashBoB passes (kernels/cuda/attention/bwd_bwd/, or their wgmma form
// in sm90/bob_sm90.cuh where BobSm90Chosen says so; equations in
// docs/derivations/attention_bwd_bwd.md). No N×N buffer, no atomics.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cuda/attention/bwd_bwd/bob_params.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/attention/head_dim_padding.h"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops/attention.h"

namespace flashtick::cuda {
namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr int64_t kRowAlignElems = 8;  // 16 bytes of 16-bit elements: one cp.async chunk
constexpr int64_t kMaxGridYZ = 65535;

// The instantiation of a kernel head dim (64, 128 or 256: FlashBobRunsHeadDim after
// padding) for one dtype.
template <DType kDType>
cudaError_t LaunchBobForHeadDim(int64_t head_dim, const BobParams& p, cudaStream_t stream) {
  if (head_dim == 64) return LaunchBobPasses<kDType, 64>(p, stream);
  if (head_dim == 128) return LaunchBobPasses<kDType, 128>(p, stream);
  return LaunchBobPasses<kDType, 256>(p, stream);
}

// Every row of `t` starts on a 16-byte boundary (the kernels copy rows in 16-byte chunks).
absl::Status CheckRowAlignment(const char* name, const TensorView& t) {
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0 || t.stride(0) % kRowAlignElems != 0 ||
      t.stride(1) % kRowAlignElems != 0 || t.stride(2) % kRowAlignElems != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_bwd_bwd (flash_cuda): ", name,
        " must start 16-byte aligned with B, T and "
        "head strides that are multiples of 8 elements; got ",
        t.DebugString(), " strides ", t.stride(0), ",", t.stride(1), ",", t.stride(2)));
  return absl::OkStatus();
}

BobOperand Operand(const TensorView& t) {
  return BobOperand{t.data, t.stride(0), t.stride(1), t.stride(2)};
}

}  // namespace

absl::Status AttentionBwdBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RETURN_IF_ERROR(CheckAttentionArity(Op::kAttentionBwdBwd, in.size(), out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], &s));
  const DType dt = in[0].dtype;
  if (dt != DType::kBF16 && dt != DType::kF16)
    return absl::UnimplementedError(
        absl::StrCat("attention_bwd_bwd (flash_cuda) takes bf16 or fp16 tensors; got ",
                     DTypeName(dt), " (use the cpu_reference backend for fp32/fp64)"));
  if (!flash::FlashBobRunsHeadDim(s.D))
    return absl::UnimplementedError(absl::StrCat("attention_bwd_bwd (flash_cuda) runs head dims ",
                                                 flash::kFlashBobHeadDimsText, "; got ", s.D,
                                                 " (docs/kernels/head_dims.md)"));
  if (s.T > std::numeric_limits<int32_t>::max() / 2 || s.B > kMaxGridYZ || s.H > kMaxGridYZ)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_bwd_bwd (flash_cuda): B, H must be ≤ 65535 and T < 2^30; got B=", s.B,
        " H=", s.H, " T=", s.T));
  const char* in_names[] = {"Q", "K", "V", "O", "dO", "L", "Dvec", "gQ", "gK", "gV"};
  const int64_t in_heads[] = {s.H, s.Hkv, s.Hkv, s.H, s.H, 0, 0, s.H, s.Hkv, s.Hkv};
  for (int i : {0, 1, 2, 3, 4, 7, 8, 9}) {
    RETURN_IF_ERROR(CheckAttentionTensor(in_names[i], in[i], s.B, s.T, in_heads[i], s.D, dt));
    RETURN_IF_ERROR(CheckRowAlignment(in_names[i], in[i]));
  }
  RETURN_IF_ERROR(CheckAttentionStats("L", in[5], s, DType::kF32));
  RETURN_IF_ERROR(CheckAttentionStats("Dvec", in[6], s, DType::kF32));
  const char* out_names[] = {"∂Q", "∂K", "∂V", "∂dO"};
  const int64_t out_heads[] = {s.H, s.Hkv, s.Hkv, s.H};
  for (int i = 0; i < 4; ++i) {
    RETURN_IF_ERROR(CheckAttentionTensor(out_names[i], out[i], s.B, s.T, out_heads[i], s.D, dt));
    RETURN_IF_ERROR(CheckRowAlignment(out_names[i], out[i]));
    // Pass 2 reads Q, dO, gQ after pass 1 wrote ∂Q, ∂dO: outputs must not alias inputs.
    for (const TensorView& t : in)
      if (t.data == out[i].data)
        return absl::InvalidArgumentError(absl::StrCat("attention_bwd_bwd (flash_cuda): output ",
                                                       out_names[i],
                                                       " aliases an input; pass distinct buffers"));
  }
  for (const TensorView* t : {&in[0], &in[1], &in[2], &in[3], &in[4], &in[5], &in[6], &in[7],
                              &in[8], &in[9], &out[0], &out[1], &out[2], &out[3]})
    if (t->device != DeviceKind::kCuda)
      return absl::InvalidArgumentError(
          absl::StrCat("attention_bwd_bwd (flash_cuda): every tensor must be on the GPU; got ",
                       t->DebugString()));
  if (!ctx.scratch)
    return absl::FailedPreconditionError(
        "attention_bwd_bwd (flash_cuda): the CUDA context has no scratch allocator for the "
        "row states c, e");
  if (flash::FlashKernelHeadDim(s.D) != s.D)  // 16, 32, 96: on the 64/128 kernels, zero-padded
    return RunWithPaddedHeadDim(desc, in, out, ctx, s.D, &AttentionBwdBwd);
  // The O(N) extra memory of the op: c and e, fp32 [B, H, T] each.
  const size_t state_floats = static_cast<size_t>(s.B * s.H * s.T);
  ASSIGN_OR_RETURN(std::shared_ptr<void> states, ctx.scratch(2 * state_floats * sizeof(float)));

  BobParams p;
  p.q = Operand(in[0]);
  p.k = Operand(in[1]);
  p.v = Operand(in[2]);
  p.o = Operand(in[3]);
  p.dout = Operand(in[4]);
  p.lse = in[5].as<const float>();
  p.dvec = in[6].as<const float>();
  p.gq = Operand(in[7]);
  p.gk = Operand(in[8]);
  p.gv = Operand(in[9]);
  p.ddq = Operand(out[0]);
  p.ddk = Operand(out[1]);
  p.ddv = Operand(out[2]);
  p.dddo = Operand(out[3]);
  p.c = static_cast<float*>(states.get());
  p.e = p.c + state_floats;
  p.B = static_cast<int>(s.B);
  p.T = static_cast<int>(s.T);
  p.H = static_cast<int>(s.H);
  p.Hkv = static_cast<int>(s.Hkv);
  const double scale = AttentionScale(desc.attention, s.D);
  p.scale = static_cast<float>(scale);
  p.scale_log2 = static_cast<float>(scale * static_cast<double>(kLog2e));
  p.causal = desc.attention.causal;

  // The wgmma passes on an H100/H200 in every mode but flash (the mma.sync kernels):
  // cuDNN has no backward-over-backward, and on the GPU they pass the same parity and
  // JAX oracle at 1.4–1.5× the speed (docs/kernels/hopper.md).
  if (BobSm90Chosen(static_cast<int>(s.D), dt, ctx.sm)) {
    RETURN_IF_CUDA_ERROR(sm90::LaunchBobSm90(p, dt, ctx.stream));  // wgmma passes
    return absl::OkStatus();
  }
  RETURN_IF_CUDA_ERROR(dt == DType::kBF16 ? LaunchBobForHeadDim<DType::kBF16>(s.D, p, ctx.stream)
                                           : LaunchBobForHeadDim<DType::kF16>(s.D, p, ctx.stream));
  // `states` is released here; the stream-ordered allocator frees it after the kernels.
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
