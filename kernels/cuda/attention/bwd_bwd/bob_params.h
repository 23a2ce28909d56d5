// Parameters and launch entry points of the CUDA attention backward-over-backward
// (FlashBoB, docs/derivations/attention_bwd_bwd.md). Host-visible: compiles without
// nvcc (cuda_runtime.h is a plain C++ header), so the launcher (attention_bwd_bwd_launch.cc)
// validates and fills BobParams with the ordinary C++ compiler. Strides are in elements; the head
// dim is contiguous. Layouts: Q, O, dO, gQ, ∂Q, ∂dO [B, T, H, D]; K, V, gK, gV, ∂K, ∂V [B, T, Hkv,
// D]; L (natural-log log-sum-exp), Dvec, c, e: fp32 [B, H, T] contiguous.
#pragma once

#include <cstdint>

#ifndef FLASHTICK_CUDA_EMULATION  // the CPU emulator (tests/cuda_emu) has no runtime API
#include <cuda_runtime.h>
#endif

#include "kernels/tensor.h"

namespace flashtick::cuda {

// A [B, T, heads, D] operand: element (b, t, h, d) is ptr[b·sb + t·st + h·sh + d].
struct BobOperand {
  void* ptr = nullptr;
  int64_t sb = 0, st = 0, sh = 0;
};

struct BobParams {
  // Inputs (read-only).
  BobOperand q, k, v, o, dout, gq, gk, gv;
  const float* lse = nullptr;   // L
  const float* dvec = nullptr;  // D_i = dO_i·O_i
  // Outputs.
  BobOperand ddq, ddk, ddv, dddo;
  // Row states written by pass 1 and read by pass 2 (eq. 3 and 8), [B, H, T] fp32.
  float* c = nullptr;
  float* e = nullptr;
  int B = 0, T = 0, H = 0, Hkv = 0;
  float scale = 0.0f;       // softmax scale s
  float scale_log2 = 0.0f;  // s·log2(e): P = exp2(QKᵀ·scale_log2 − L·log2(e))
  bool causal = true;
};

// Tile shape of the FlashBoB kernels at a kernel head dim (64, 128 or 256): BobTraits
// (bob_traits.cuh) takes its blocks, warps and buffering from here, and the host names
// the variant from the same values (FlashBobVariantName, kernel_path.cc), so the name
// cannot drift from what runs. Both passes share one shape.
//   D = 64, 128: 64 × 64 tiles, 8 warps (4 × 2); double-buffered at 64, single at 128.
//   D = 256: 32 × 32 tiles, 8 warps (2 × 4), single-buffered. The budget: pass 1 holds
//     Q, dO, gQ [32, 256] (48 KB) + K, V, gK, gV [32, 256] (64 KB) + four 16-bit score
//     tiles stored 64 wide for the swizzle (16 KB) + row sums (3 KB) = 131 KB; pass 2
//     holds K, V, gK, gV (64 KB) + Q, dO, gQ (48 KB) + three score tiles (12 KB) + stats
//     (0.5 KB) = 124.5 KB: both under sm_80's 163 KB opt-in. A warp owns 16 rows × 64
//     head-dim columns of each accumulator: pass 1's four are 4 · 8 n8 blocks · 4 = 128
//     fp32 a thread (as at D = 128), pass 2's two are 64. Double-buffering would need
//     195 KB (pass 1) and 173 KB (pass 2): H100/H200 only (227 KB), so not taken.
//     docs/kernels/head_dims.md has the reasoning.
struct BobTiles {
  int head_dim = 0, block_m = 0, block_n = 0, warps = 0, stages = 0;
};
inline constexpr BobTiles BobTileShape(int head_dim) {
  if (head_dim == 64) return BobTiles{64, 64, 64, 8, 2};
  if (head_dim == 128) return BobTiles{128, 64, 64, 8, 1};
  if (head_dim == 256) return BobTiles{256, 32, 32, 8, 1};
  return BobTiles{};
}

// Runs pass 1 then pass 2 on `stream` for dtype ∈ {kBF16, kF16} and kHeadDim ∈ {64, 128, 256}
// (explicit instantiations in bob_inst_*.cu). Returns the launch error, if any.
#ifndef FLASHTICK_CUDA_EMULATION
template <DType kDType, int kHeadDim>
cudaError_t LaunchBobPasses(const BobParams& params, cudaStream_t stream);
#endif

}  // namespace flashtick::cuda
