// The sm_90a attention forward's variants and launcher (flash_fwd_sm90.h). Built for
// sm_90a only (kernels/CMakeLists.txt, flashtick_sm90a): wgmma exists in no other target.
// Two warpgroups a CTA (128 query rows, 64 keys a step; 32 KB of shared memory at d = 64,
// 64 KB at d = 128, plus the 1 KB alignment slack): FA3's consumer shape without its
// producer warp; not yet chosen by measurement. FLASHTICK_SM90_FWD=overlap runs its
// variant with the softmax overlapped with the previous block's P·V (kernel path suffix
// _ov; not yet timed on a GPU).
#include <cstdlib>
#include <string>

#include "kernels/cuda/attention/sm90/flash_fwd_sm90.cuh"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"

namespace flashtick::cuda::sm90 {
namespace {

template <int kHeadDim, bool kOverlap = false>
using Traits = FlashFwdSm90Traits<kHeadDim, /*kWarpgroups=*/2, kOverlap>;

template <int kHeadDim, typename Elem, bool kCausal, bool kOverlap>
cudaError_t Launch(const flash::AttentionFwdParams& p, cudaStream_t stream) {
  using Tr = Traits<kHeadDim, kOverlap>;
  auto kernel = [] {
    if constexpr (kOverlap) return flash_fwd_sm90_overlap_kernel<Tr, Elem, kCausal>;
    else return flash_fwd_sm90_kernel<Tr, Elem, kCausal>;
  }();
  constexpr int kSmem = Tr::kSmemBytes;
  if (kSmem > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (err != cudaSuccess) return err;
  }
  const dim3 grid(p.B * p.H, (p.T + Tr::kBlockM - 1) / Tr::kBlockM);
  kernel<<<grid, Tr::kNThreads, kSmem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

bool FlashFwdSm90Runs(int head_dim, DType dtype, int sm) {
  return (head_dim == 64 || head_dim == 128) && sm == 90 &&
         (dtype == DType::kBF16 || dtype == DType::kF16);
}

flash::FlashFwdTiles FlashFwdSm90TileShape(int head_dim) {
  flash::FlashFwdTiles t;
  t.head_dim = head_dim;
  t.block_m = Traits<64>::kBlockM;  // the same tiles at either head dim
  t.block_n = Traits<64>::kBlockN;
  t.warps = Traits<64>::kNThreads / 32;
  t.ctas_per_sm = 1;
  t.split_kv = false;
  return t;
}

template <int kHeadDim, bool kOverlap>
cudaError_t LaunchForHeadDim(const flash::AttentionFwdParams& p, cudaStream_t stream) {
  const bool bf16 = p.dtype == DType::kBF16;
  if (p.causal)
    return bf16 ? Launch<kHeadDim, __nv_bfloat16, true, kOverlap>(p, stream)
                : Launch<kHeadDim, __half, true, kOverlap>(p, stream);
  return bf16 ? Launch<kHeadDim, __nv_bfloat16, false, kOverlap>(p, stream)
              : Launch<kHeadDim, __half, false, kOverlap>(p, stream);
}

bool FlashFwdSm90Overlaps() {
  static const bool on = [] {
    const char* v = std::getenv("FLASHTICK_SM90_FWD");
    return v != nullptr && std::string(v) == "overlap";
  }();
  return on;
}

cudaError_t LaunchFlashFwdSm90(const flash::AttentionFwdParams& p, cudaStream_t stream) {
  const bool overlap = FlashFwdSm90Overlaps();
  if (p.D == 128) return overlap ? LaunchForHeadDim<128, true>(p, stream) : LaunchForHeadDim<128, false>(p, stream);
  if (p.D == 64) return overlap ? LaunchForHeadDim<64, true>(p, stream) : LaunchForHeadDim<64, false>(p, stream);
  return cudaErrorInvalidValue;
}

}  // namespace flashtick::cuda::sm90
