// The compiled Flash attention variants: one traits choice per (pass, head dim), each
// with the reason for its tiles. attention_{fwd,bwd}_d{64,128,256}.cu instantiate them for
// bf16/fp16 × causal/non-causal, with the shapes KernelPath names them by;
// tests/cuda_emu runs the same traits on the CPU.
#pragma once

#include "kernels/cuda/attention/flash_bwd_launch.cuh"
#include "kernels/cuda/attention/flash_fwd_kernel.cuh"

namespace flashtick::cuda::flash {

// d = 64 forward: 128×128 tiles, 4 warps (32 query rows per warp): FlashAttention-2's
// measured choice on A100/H100 (flash_fwd_launch_template.h, run_mha_fwd_hdim64); not
// yet re-measured for flashtick. 48 KB of shared memory, two CTAs per SM.
using FwdTraitsD64 = FlashFwdTraits</*kHeadDim=*/64, /*kBlockM=*/128, /*kBlockN=*/128, /*kNWarps=*/4>;

// d = 128 forward: 128×64 tiles, 4 warps: FA2's sm_80/sm_90 choice (run_mha_fwd_hdim128);
// the 64-key step keeps S at 64 registers per thread beside the 128 of the O
// accumulator. 64 KB of shared memory, two CTAs per SM.
using FwdTraitsD128 = FlashFwdTraits</*kHeadDim=*/128, /*kBlockM=*/128, /*kBlockN=*/64, /*kNWarps=*/4>;

// d = 256 forward: 64×64 tiles, 4 warps (16 query rows per warp): FA2's choice for
// H100 (run_mha_fwd_hdim256: "64 x 64 (96KB smem) since then we can get 2 CTAs per
// SM"; A100 gets 128×64 with 8 warps at one CTA per SM). Q 32 KB + K, V 32 KB each =
// 96 KB of shared memory keeps two CTAs per SM (FlashFwdTraits' 99 KB bound); the O
// accumulator is 16 rows × 256 per warp = 128 fp32 registers per thread, S 32 beside
// it. Not yet measured on the GPU.
using FwdTraitsD256 = FlashFwdTraits</*kHeadDim=*/256, /*kBlockM=*/64, /*kBlockN=*/64, /*kNWarps=*/4>;

// d = 64 backward: 128 keys per CTA, 128-row query blocks, 8 warps: S/dP on a 4×2 warp
// grid (32×64 per warp: half the rows per thread of 2×4, so fewer registers for the A
// fragments and the rows' L and D), dK/dV on 4×2 (32×32), dQ on 4×2 (32×32); 162 KB
// of shared memory, one CTA per SM. FA2's sm_80 choice for d = 64 with 144 KB+ of
// shared memory (run_mha_bwd_hdim64, AtomLayoutMSdP = 4). The 2×4 S/dP grid measured
// 0.79× SDPA flash for fwd+bwd on the H200 (bench/results, 2026-11-29). Other tilings
// are tried in bench code (bench/attention/bwd_tiles_bench.cu), never by overriding
// this one.
using BwdTraitsD64 = FlashBwdTraits</*kHeadDim=*/64, /*kBlockM=*/128, /*kBlockN=*/128, /*kNWarps=*/8,
                                    /*kWarpsMSdP=*/4, /*kWarpsNdKV=*/4, /*kWarpsMdQ=*/4>;

// d = 128 backward: 128 keys per CTA, 64-row query blocks, 8 warps: S/dP 2×4 (32×32 per
// warp), dK/dV 4×2 (32×64: 128 accumulator registers for the pair), dQ 2×4 (32×32);
// 161 KB of shared memory, one CTA per SM. FA2's sm_80 choice (run_mha_bwd_hdim128).
using BwdTraitsD128 = FlashBwdTraits</*kHeadDim=*/128, /*kBlockM=*/64, /*kBlockN=*/128, /*kNWarps=*/8,
                                     /*kWarpsMSdP=*/2, /*kWarpsNdKV=*/4, /*kWarpsMdQ=*/2>;

// d = 256 backward: 64 keys per CTA, 32-row query blocks, 8 warps: S/dP 2×4 (16×16 per
// warp), dK/dV 4×2 (16×128: 128 accumulator registers for the pair, as d = 128), dQ
// 2×4 (16×64); 4·32·256 (Q, dO double-buffered) + 2·64·256 (K, V) + 2·32·64 (P, dS)
// 16-bit elements + the L, D rows = 136.5 KB of shared memory, one CTA per SM. FA2
// runs d = 256 with 64×64 blocks (run_mha_bwd_hdim256: 176 KB a CTA on H100, 144 KB
// with V in registers on A100); with our double-buffered Q/dO 64×64 needs 208 KB, over
// sm_80's 163 KB, so the query block halves. Not yet measured on the GPU.
using BwdTraitsD256 = FlashBwdTraits</*kHeadDim=*/256, /*kBlockM=*/32, /*kBlockN=*/64, /*kNWarps=*/8,
                                     /*kWarpsMSdP=*/2, /*kWarpsNdKV=*/4, /*kWarpsMdQ=*/2>;

// The traits each head dim's launchers run: the one place a variant is chosen. The
// launchers (LaunchFlashFwd/Bwd) and the shapes the host reads (FlashFwdTileShape /
// FlashBwdTileShape, hence the kernel-path names) are both defined below from these
// aliases and instantiated together in attention_{fwd,bwd}_d{64,128,256}.cu, so a name
// cannot describe other tiles than the ones launched.
template <int kHeadDim>
struct FlashVariant;
template <>
struct FlashVariant<64> {
  using Fwd = FwdTraitsD64;
  using Bwd = BwdTraitsD64;
};
template <>
struct FlashVariant<128> {
  using Fwd = FwdTraitsD128;
  using Bwd = BwdTraitsD128;
};
template <>
struct FlashVariant<256> {
  using Fwd = FwdTraitsD256;
  using Bwd = BwdTraitsD256;
};

// The host's view of one traits choice. split_kv: RunFlashFwd has the split kernel and
// the combine for every forward traits, so each forward variant may split.
template <typename Traits>
constexpr FlashFwdTiles FwdTilesOf() {
  return {Traits::kHeadDim, Traits::kBlockM, Traits::kBlockN, Traits::kNWarps,
          Traits::kMinBlocksPerSm, /*split_kv=*/true};
}
template <typename Traits>
constexpr FlashBwdTiles BwdTilesOf() {
  return {Traits::kHeadDim, Traits::kBlockM, Traits::kBlockN, Traits::kNWarps};
}

template <int kHeadDim>
FlashFwdTiles FlashFwdTileShape() {
  using Traits = typename FlashVariant<kHeadDim>::Fwd;
  static_assert(Traits::kHeadDim == kHeadDim, "forward traits of another head dim");
  return FwdTilesOf<Traits>();
}
template <int kHeadDim>
FlashBwdTiles FlashBwdTileShape() {
  using Traits = typename FlashVariant<kHeadDim>::Bwd;
  static_assert(Traits::kHeadDim == kHeadDim, "backward traits of another head dim");
  return BwdTilesOf<Traits>();
}

#ifndef FLASHTICK_CUDA_EMULATION
template <int kHeadDim>
cudaError_t LaunchFlashFwd(const AttentionFwdParams& p, cudaStream_t stream) {
  return RunFlashFwd<typename FlashVariant<kHeadDim>::Fwd>(p, stream);
}
template <int kHeadDim>
cudaError_t LaunchFlashBwd(const AttentionBwdParams& p, cudaStream_t stream) {
  return RunFlashBwd<typename FlashVariant<kHeadDim>::Bwd>(p, stream);
}
#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace flashtick::cuda::flash
