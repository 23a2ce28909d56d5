// RunWithPaddedHeadDim: the zero-padded run of head_dim_padding.h.
#include "kernels/cuda/attention/head_dim_padding.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/ops/attention.h"

namespace flashtick::cuda {
namespace {

HeadDimCopyParams CopyParams(const TensorView& src, const TensorView& dst, int src_cols, int dst_cols) {
  HeadDimCopyParams p;
  p.src = static_cast<const uint16_t*>(src.data);
  p.src_b = src.stride(0), p.src_t = src.stride(1), p.src_h = src.stride(2);
  p.dst = static_cast<uint16_t*>(dst.data);
  p.dst_b = dst.stride(0), p.dst_t = dst.stride(1), p.dst_h = dst.stride(2);
  p.B = src.dim(0), p.T = src.dim(1), p.H = src.dim(2);
  p.src_cols = src_cols, p.dst_cols = dst_cols;
  return p;
}

}  // namespace

absl::Status RunWithPaddedHeadDim(const OpDesc& desc, In in, Out out, CudaContext& ctx, int64_t D,
                                  AttentionOpFn fn) {
  const int Dp = flash::FlashKernelHeadDim(D);
  if (Dp == 0 || Dp == D)
    return absl::InternalError(absl::StrCat("flash_cuda: head dim ", D, " has no padded kernel; this is a bug"));
  if (!ctx.scratch)
    return absl::FailedPreconditionError("flash_cuda: head dim padding needs the context's scratch allocator");
  OpDesc inner = desc;
  inner.attention.scale = AttentionScale(desc.attention, D);  // the real head dim's 1/sqrt(D)
  inner.attention.head_dim = Dp;
  std::vector<std::shared_ptr<void>> held;  // released after the enqueues (stream-ordered)
  // A contiguous zero-padded twin of a [B, T, heads, D] tensor, in scratch memory.
  auto padded = [&](const char* role, size_t i, const TensorView& t) -> absl::StatusOr<TensorView> {
    if (t.dim(3) != D || DTypeSize(t.dtype) != 2)
      return absl::InvalidArgumentError(absl::StrCat("flash_cuda: ", OpName(desc.op), " ", role, " ", i,
                                                     " is ", t.DebugString(), "; expected a 16-bit [B, T, heads, ", D, "]"));
    TensorView p = t;
    p.shape[3] = Dp;
    p.strides = {t.dim(1) * t.dim(2) * Dp, t.dim(2) * Dp, Dp, 1};
    ASSIGN_OR_RETURN(std::shared_ptr<void> buf, ctx.scratch(p.bytes()));
    p.data = buf.get();
    held.push_back(std::move(buf));
    return p;
  };
  std::vector<TensorView> pin(in.begin(), in.end()), pout(out.begin(), out.end());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].rank != 4 || in[i].data == nullptr) continue;
    ASSIGN_OR_RETURN(pin[i], padded("input", i, in[i]));
    RETURN_IF_ERROR(LaunchHeadDimCopy(CopyParams(in[i], pin[i], static_cast<int>(D), Dp), ctx.stream));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].rank != 4 || out[i].data == nullptr) continue;
    ASSIGN_OR_RETURN(pout[i], padded("output", i, out[i]));
  }
  RETURN_IF_ERROR(fn(inner, pin, pout, ctx));
  for (size_t i = 0; i < out.size(); ++i) {
    if (pout[i].data == out[i].data) continue;  // rank-3 statistics were written in place
    const int d = static_cast<int>(D);
    RETURN_IF_ERROR(LaunchHeadDimCopy(CopyParams(pout[i], out[i], d, d), ctx.stream));
  }
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
