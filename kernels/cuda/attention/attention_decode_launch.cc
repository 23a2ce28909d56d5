// Host launcher of the CUDA attention decode (Op::kAttentionDecode): validates
// q [B,1,H,D] and Kcache, Vcache [B,Tk,Hkv,D] (bf16/fp16, D ∈ {16, 32, 64, 96, 128, 256}), takes the
// per-chunk fp32 partials (O(B·H·Tk/256·D)) from the optional workspace input, else
// from the context's scratch, and enqueues the split and combine kernels
// (flash_decode_kernel.cuh), with the optional kv_length passed through to them as a
// device pointer. Out: o [B,1,H,D].
#include "common/status_macros.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops/attention.h"

namespace flashtick::cuda {

absl::Status AttentionDecode(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RETURN_IF_ERROR(CheckAttentionArity(Op::kAttentionDecode, in.size(), out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionDecodeArgs(in[0], in[1], in[2], &s));
  const DType dt = in[0].dtype;
  RETURN_IF_ERROR(flash::CheckFlashVariant("attention_decode", s, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("o", out[0], s.B, 1, s.H, s.D, dt));
  const char* names[] = {"q", "Kcache", "Vcache"};
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(flash::CheckFlashLayout(names[i], in[i]));
  RETURN_IF_ERROR(flash::CheckFlashLayout("o", out[0]));
  if (!ctx.scratch)
    return absl::FailedPreconditionError("flash_cuda: attention_decode needs the context's scratch allocator");

  flash::AttentionDecodeParams p;
  p.q = flash::ToArg(in[0]);
  p.k = flash::ToArg(in[1]);
  p.v = flash::ToArg(in[2]);
  p.o = flash::ToArg(out[0]);
  p.B = static_cast<int>(s.B), p.Tk = static_cast<int>(s.T), p.H = static_cast<int>(s.H);
  p.Hkv = static_cast<int>(s.Hkv), p.D = static_cast<int>(s.D), p.group = p.H / p.Hkv;
  p.n_chunks = (p.Tk + flash::kFlashDecodeChunk - 1) / flash::kFlashDecodeChunk;
  float scale = 0.0f;
  RETURN_IF_ERROR(flash::FlashScale(desc.attention, s.D, &scale, &p.scale_log2));
  p.dtype = dt;
  const TensorView* kv_length = nullptr;
  RETURN_IF_ERROR(DecodeKvLengthInput(in, s.B, &kv_length));
  if (kv_length != nullptr) p.kv_len = kv_length->as<const int32_t>();
  // Partials: m, l and o of every (b, h, chunk): in the caller's workspace when it
  // passed one large enough (a decode step then allocates nothing), else one
  // allocation from the stream-ordered pool.
  static_assert(flash::kFlashDecodeChunk == kAttentionDecodeChunk);
  const int64_t parts = s.B * s.H * p.n_chunks;
  const int64_t floats = parts * (2 + s.D);
  std::shared_ptr<void> scratch;
  if (in.size() >= 4 && in[3].data != nullptr && in[3].dtype == DType::kF32 &&
      in[3].numel() >= floats) {
    p.part_m = static_cast<float*>(in[3].data);
  } else {
    ASSIGN_OR_RETURN(scratch, ctx.scratch(static_cast<size_t>(floats) * sizeof(float)));
    p.part_m = static_cast<float*>(scratch.get());
  }
  p.part_l = p.part_m + parts;
  p.part_o = p.part_l + parts;
  cudaError_t err = cudaSuccess;
  switch (s.D) {  // CheckFlashVariant admitted exactly these
    case 16: err = flash::LaunchFlashDecode<16>(p, ctx.stream); break;
    case 32: err = flash::LaunchFlashDecode<32>(p, ctx.stream); break;
    case 64: err = flash::LaunchFlashDecode<64>(p, ctx.stream); break;
    case 96: err = flash::LaunchFlashDecode<96>(p, ctx.stream); break;
    case 256: err = flash::LaunchFlashDecode<256>(p, ctx.stream); break;
    default: err = flash::LaunchFlashDecode<128>(p, ctx.stream); break;
  }
  RETURN_IF_CUDA_ERROR(err);
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
