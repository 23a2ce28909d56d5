// The compiled Flash attention variants: one traits choice per (pass, head dim), each
// with the reason for its tiles. attention_{fwd,bwd}_d{64,128}.cu instantiate them for
// bf16/fp16 × causal/non-causal; tests/cuda_emu runs the same traits on the CPU.
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

// d = 64 backward: 128 keys per CTA, 128-row query blocks, 8 warps: S/dP on a 4×2 warp
// grid (32×64 per warp: half the rows per thread of 2×4, so fewer registers for the A
// fragments and the rows' L and D), dK/dV on 4×2 (32×32), dQ on 4×2 (32×32); 162 KB
// of shared memory, one CTA per SM. FA2's sm_80 choice for d = 64 with 144 KB+ of
// shared memory (run_mha_bwd_hdim64, AtomLayoutMSdP = 4). The 2×4 S/dP grid measured
// 0.79× SDPA flash for fwd+bwd on the H200 (bench/results, 2026-11-29).
// FLASHTICK_BWD_D64_TRAITS (a compile definition: the 8 template arguments) replaces
// the choice for tile experiments; bench/scripts/gpu_bwd_tiles.sh builds and times such
// variants beside this one.
#ifdef FLASHTICK_BWD_D64_TRAITS
using BwdTraitsD64 = FlashBwdTraits<FLASHTICK_BWD_D64_TRAITS>;
#else
using BwdTraitsD64 = FlashBwdTraits</*kHeadDim=*/64, /*kBlockM=*/128, /*kBlockN=*/128, /*kNWarps=*/8,
                                    /*kWarpsMSdP=*/4, /*kWarpsNdKV=*/4, /*kWarpsMdQ=*/4>;
#endif

// d = 128 backward: 128 keys per CTA, 64-row query blocks, 8 warps: S/dP 2×4 (32×32 per
// warp), dK/dV 4×2 (32×64: 128 accumulator registers for the pair), dQ 2×4 (32×32);
// 161 KB of shared memory, one CTA per SM. FA2's sm_80 choice (run_mha_bwd_hdim128).
using BwdTraitsD128 = FlashBwdTraits</*kHeadDim=*/128, /*kBlockM=*/64, /*kBlockN=*/128, /*kNWarps=*/8,
                                     /*kWarpsMSdP=*/2, /*kWarpsNdKV=*/4, /*kWarpsMdQ=*/2>;

}  // namespace flashtick::cuda::flash
