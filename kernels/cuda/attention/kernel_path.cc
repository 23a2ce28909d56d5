// Names of the attention kernel variants the CUDA launchers run, reported by
// Backend::KernelPath in every response, metric and report:
//   flash_cuda_<op>_d<D>_m<BlockM>n<BlockN>w<warps>_sm<cc>, e.g. flash_cuda_fwd_d64_m128n128w4_splitkv_sm90
// (`_splitkv`: the forward splits the keys when the grid would underfill the GPU;
// `_pad<D>`: head dim D runs zero-padded on that kernel, head_dim_padding.h) and
// flash_cuda_unsupported_<why> where Run would return Unimplemented. The forward and
// backward parts are read off the traits the launchers instantiate (FlashFwdTileShape,
// FlashBwdTileShape: flash_variants.cuh), the backward-over-backward part off
// BobTileShape (bob_params.h, what BobTraits is built from), and the padding from
// FlashKernelHeadDim, the function the launchers pad by; nothing here is written by hand.
#include "absl/strings/str_cat.h"
#include "kernels/common/dispatch.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/attention/flash_params.h"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {
namespace {

// flash_cuda_<op>_d<D>_m<BlockM>n<BlockN>wg<warpgroups><variant><pad>_sm90a: the names of
// the sm_90a kernels, read off their tile shapes.
std::string Sm90aName(const char* op, int head_dim, int block_m, int block_n, int warps,
                      const std::string& variant, const std::string& pad) {
  return absl::StrCat("flash_cuda_", op, "_d", head_dim, "_m", block_m, "n", block_n, "wg", warps / 4, variant,
                      pad, "_sm90a");
}

}  // namespace

std::string AttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx) {
  if (desc.dtype != DType::kBF16 && desc.dtype != DType::kF16)
    return absl::StrCat("flash_cuda_unsupported_", DTypeName(desc.dtype));
  const int kernel_d = flash::FlashKernelHeadDim(head_dim);
  if (kernel_d == 0) return absl::StrCat("flash_cuda_unsupported_d", head_dim);
  const std::string pad = kernel_d == head_dim ? "" : absl::StrCat("_pad", head_dim);
  const std::string sm = absl::StrCat(pad, "_sm", ctx.sm);
  switch (desc.op) {
    case Op::kAttentionFwd:
      // flash_sm90a: the wgmma kernel runs the (padded) head dim where it can.
      if (FlashSm90aAsked() && sm90::FlashFwdSm90Runs(kernel_d, desc.dtype, ctx.sm)) {
        const flash::FlashFwdTiles t = sm90::FlashFwdSm90TileShape(kernel_d);
        return Sm90aName("fwd", t.head_dim, t.block_m, t.block_n, t.warps,
                         sm90::FlashFwdSm90Overlaps() ? "_ov" : "", pad);
      }
      return absl::StrCat("flash_cuda_",
                          flash::FlashFwdVariantName(HEADDIM_SWITCH(
                              kernel_d, kD, [] { return flash::FlashFwdTileShape<kD>(); })),
                          sm);
    case Op::kAttentionBwd:
      if (FlashSm90aAsked() && sm90::FlashBwdSm90Runs(kernel_d, desc.dtype, ctx.sm)) {
        const flash::FlashBwdTiles t = sm90::FlashBwdSm90TileShape();
        return Sm90aName("bwd", t.head_dim, t.block_m, t.block_n, t.warps, "", pad);
      }
      return absl::StrCat("flash_cuda_",
                          flash::FlashBwdVariantName(HEADDIM_SWITCH(
                              kernel_d, kD, [] { return flash::FlashBwdTileShape<kD>(); })),
                          sm);
    case Op::kAttentionBwdBwd:
      if (!flash::FlashBobRunsHeadDim(head_dim)) return absl::StrCat("flash_cuda_unsupported_bwd_bwd_d", head_dim);
      if (BobSm90Chosen(kernel_d, desc.dtype, ctx.sm)) {
        const BobTiles t = sm90::BobSm90TileShape();
        const sm90::BobSm90Operands regs = sm90::BobSm90RegisterOperands();
        return Sm90aName("bwd_bwd", t.head_dim, t.block_m, t.block_n, t.warps,
                         absl::StrCat(regs.qdo ? "_qdoreg" : "", regs.kv ? "_kvreg" : ""), pad);
      }
      return absl::StrCat("flash_cuda_", flash::FlashBobVariantName(BobTileShape(kernel_d)), sm);
    case Op::kAttentionDecode:
      return absl::StrCat("flash_cuda_decode_d", head_dim, "_split", flash::kFlashDecodeChunk, "_sm", ctx.sm);
    default:
      return absl::StrCat("flash_cuda_unsupported_", OpName(desc.op));
  }
}

}  // namespace flashtick::cuda
