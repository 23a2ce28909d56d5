// The sm_90a attention forward's variants and launcher (flash_fwd_sm90.h). Built for
// sm_90a only (kernels/CMakeLists.txt, flashtick_sm90a): wgmma exists in no other target.
// Two warpgroups a CTA (128 query rows, 64 keys a step, 32 KB of shared memory + the
// 1 KB alignment slack): FA3's consumer shape for d = 64 without its producer warp; not
// yet chosen by measurement.
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.cuh"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"

namespace flashtick::cuda::sm90 {
namespace {

using Traits = FlashFwdSm90Traits</*kHeadDim=*/64, /*kWarpgroups=*/2>;

template <typename Elem, bool kCausal>
cudaError_t Launch(const flash::AttentionFwdParams& p, cudaStream_t stream) {
  auto kernel = flash_fwd_sm90_kernel<Traits, Elem, kCausal>;
  constexpr int kSmem = Traits::kSmemBytes;
  if (kSmem > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (err != cudaSuccess) return err;
  }
  const dim3 grid(p.B * p.H, (p.T + Traits::kBlockM - 1) / Traits::kBlockM);
  kernel<<<grid, Traits::kNThreads, kSmem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

bool FlashFwdSm90Runs(int head_dim, DType dtype, int sm) {
  return head_dim == Traits::kHeadDim && sm == 90 && (dtype == DType::kBF16 || dtype == DType::kF16);
}

flash::FlashFwdTiles FlashFwdSm90TileShape() {
  flash::FlashFwdTiles t;
  t.head_dim = Traits::kHeadDim;
  t.block_m = Traits::kBlockM;
  t.block_n = Traits::kBlockN;
  t.warps = Traits::kNThreads / 32;
  t.ctas_per_sm = 1;
  t.split_kv = false;
  return t;
}

cudaError_t LaunchFlashFwdSm90(const flash::AttentionFwdParams& p, cudaStream_t stream) {
  const bool bf16 = p.dtype == DType::kBF16;
  if (p.causal) return bf16 ? Launch<__nv_bfloat16, true>(p, stream) : Launch<__half, true>(p, stream);
  return bf16 ? Launch<__nv_bfloat16, false>(p, stream) : Launch<__half, false>(p, stream);
}

}  // namespace flashtick::cuda::sm90
