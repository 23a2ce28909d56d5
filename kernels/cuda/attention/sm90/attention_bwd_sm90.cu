// The sm_90a attention backward's variants and launcher (flash_fwd_sm90.h): FA2's D
// pre-pass and dQ conversion (flash_bwd_launch.cuh) around the wgmma main kernel
// (flash_bwd_sm90.cuh). Built for sm_90a only (kernels/CMakeLists.txt, flashtick_sm90a).
// Two warpgroups a CTA (128 keys, 64-row query blocks; 81 KB of shared memory with the
// 1 KB alignment slack), 239 registers a thread at d = 64, no spills; not yet chosen by
// measurement.
#include "kernels/cuda/attention/flash_bwd_launch.cuh"
#include "kernels/cuda/attention/sm90/flash_bwd_sm90.cuh"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"

namespace flashtick::cuda::sm90 {
namespace {

using BwdTraits = FlashBwdSm90Traits</*kHeadDim=*/64, /*kWarpgroups=*/2>;

template <typename Elem, bool kCausal>
cudaError_t LaunchBwd(const flash::AttentionBwdParams& p, cudaStream_t stream) {
  constexpr int kD = BwdTraits::kHeadDim;
  constexpr int kRowWarps = flash::kRowKernelWarps;
  const int64_t rows = static_cast<int64_t>(p.B) * p.T * p.H;
  const dim3 row_grid(static_cast<unsigned>((rows + kRowWarps - 1) / kRowWarps));
  const dim3 row_block(kRowWarps * flash::kWarpSize);
  flash::flash_bwd_dot_do_o_kernel<Elem, kD><<<row_grid, row_block, 0, stream>>>(p);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  auto kernel = flash_bwd_sm90_kernel<BwdTraits, Elem, kCausal>;
  constexpr int kSmem = BwdTraits::kSmemBytes;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (err != cudaSuccess) return err;
  const dim3 grid(p.B * p.Hkv, (p.T + BwdTraits::kBlockN - 1) / BwdTraits::kBlockN);
  kernel<<<grid, BwdTraits::kNThreads, kSmem, stream>>>(p);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  flash::flash_bwd_convert_dq_kernel<Elem, kD><<<row_grid, row_block, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

bool FlashBwdSm90Runs(int head_dim, DType dtype, int sm) {
  return head_dim == BwdTraits::kHeadDim && sm == 90 && (dtype == DType::kBF16 || dtype == DType::kF16);
}

flash::FlashBwdTiles FlashBwdSm90TileShape() {
  flash::FlashBwdTiles t;
  t.head_dim = BwdTraits::kHeadDim;
  t.block_m = BwdTraits::kBlockM;
  t.block_n = BwdTraits::kBlockN;
  t.warps = BwdTraits::kNThreads / 32;
  return t;
}

cudaError_t LaunchFlashBwdSm90(const flash::AttentionBwdParams& p, cudaStream_t stream) {
  if (p.D != BwdTraits::kHeadDim) return cudaErrorInvalidValue;
  const bool bf16 = p.dtype == DType::kBF16;
  if (p.causal) return bf16 ? LaunchBwd<__nv_bfloat16, true>(p, stream) : LaunchBwd<__half, true>(p, stream);
  return bf16 ? LaunchBwd<__nv_bfloat16, false>(p, stream) : LaunchBwd<__half, false>(p, stream);
}

}  // namespace flashtick::cuda::sm90
