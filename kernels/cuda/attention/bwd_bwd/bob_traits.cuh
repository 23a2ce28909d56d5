// Tile sizes, warp layout and shared-memory plan of the FlashBoB kernels, plus the
// cooperative cp.async tile loads. Both passes share one shape (BobTileShape,
// bob_params.h): a CTA keeps kBlockM rows resident (pass 1: query rows; pass 2: key
// rows) and streams kBlockN rows of the other side per step. 8 warps in a
// kWarpsM × kWarpsN grid (4 × 2 at D = 64, 128; 2 × 4 at D = 256):
//   phase A (scores): warp (wm, wn) computes rows 16·wm..+16, streamed cols
//     kWarpScoreCols·wn.. of every score tile (S, dP, G, B), then writes the
//     element-wise results (P, dS, X, P∘G, ...) as 16-bit tiles to shared memory;
//   phase B (accumulate): warp (wm, wn) owns rows 16·wm..+16 and head-dim columns
//     (D/kWarpsN)·wn.. of every accumulator, reading the whole 16 × kBlockN strip.
// Splitting the accumulators over D (not keeping all D columns in one warp) is what
// keeps pass 1's four D-wide accumulators in registers: 16 rows × 64 columns a warp,
// 128 fp32 a thread, at D = 128 (2 column groups) and at D = 256 (4 column groups over
// 32-row tiles).
#pragma once

#include <cstdint>

#include "kernels/cuda/attention/bwd_bwd/bob_mma.cuh"
#include "kernels/cuda/attention/bwd_bwd/bob_params.h"

namespace flashtick::cuda::bob {

using flash::kLog2e;  // exp(x) = exp2(x·log2 e)

template <int kHeadDim_>
struct BobTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr BobTiles kTiles = BobTileShape(kHeadDim);
  // 64 × 64 at D = 64, 128: the largest square tile whose pass-1 shared plan fits an
  // A100 at D = 128 (145 KB, single-buffered) and leaves pass 2 at D = 64 two CTAs per
  // H200 SM. 32 × 32 at D = 256 (the budget is in bob_params.h).
  static constexpr int kBlockM = kTiles.block_m;
  static constexpr int kBlockN = kTiles.block_n;
  static constexpr int kStages = kTiles.stages;  // 2: double-buffered streamed tiles
  static constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;
  static constexpr int kNWarps = kTiles.warps;
  static constexpr int kWarpsM = kBlockM / kMmaM;  // one m16 slab a warp row
  static constexpr int kWarpsN = kNWarps / kWarpsM;
  static constexpr int kThreads = kNWarps * 32;

  // Phase A: a warp's slice of a score tile.
  static constexpr int kWarpScoreCols = kBlockN / kWarpsN;     // 32, or 8 at D = 256
  static constexpr int kScoreBlocks = kWarpScoreCols / kMmaN;  // n8 blocks: 4, or 1
  static constexpr int kScoreKSteps = kHeadDim / kMmaK;        // over D
  // Phase A computes the score slice in rounds of this many n8 blocks: all at D = 64
  // (fragments of the resident tiles loaded once per k step), half at D = 128 (ptxas,
  // sm_90, pass 1: 340 → 156 spilled bytes). At D = 256 a warp has one n8 block: its
  // B fragments are loaded for two k steps at once instead (LoadBFromNKTwoK).
  static constexpr int kRoundBlocks =
      kHeadDim <= 64 ? kScoreBlocks : kScoreBlocks == 1 ? 1 : kScoreBlocks / 2;
  // Phase B: a warp's slice of an accumulator.
  static constexpr int kWarpAccCols = kHeadDim / kWarpsN;  // 32, 64, 64
  static constexpr int kAccBlocks = kWarpAccCols / kMmaN;  // 4, 8, 8
  static constexpr int kAccKSteps = kBlockN / kMmaK;       // over the streamed rows

  static constexpr int kChunk = 8;                          // 16-bit elements per 16-byte cp.async
  static constexpr int kRowTileElems = kBlockM * kHeadDim;  // a resident [kBlockM, D] tile
  static constexpr int kColTileElems = kBlockN * kHeadDim;  // a streamed [kBlockN, D] tile
  // A 16-bit score tile [kBlockM][kScoreCols]: the swizzle needs ≥ 8 chunks (64
  // columns) a row, so 32-column tiles are stored 64 wide and use half of each row.
  static constexpr int kScoreCols = kBlockN < 64 ? 64 : kBlockN;
  static constexpr int kScoreTileElems = kBlockM * kScoreCols;

  static_assert(kTiles.head_dim == kHeadDim, "FlashBoB has tiles for D = 64, 128, 256");
  static_assert(kWarpsM * kMmaM == kBlockM && kWarpsM * kWarpsN == kNWarps,
                "each warp row group is one m16 slab; the warps tile the block");
  static_assert((kScoreBlocks % 2 == 0 || kScoreBlocks == 1) && kAccBlocks % 2 == 0,
                "ldmatrix.x4 loads two n8 blocks (or one block over two k steps)");
  static_assert(kScoreBlocks != 1 || kScoreKSteps % 2 == 0, "whole k-step pairs");
  static_assert(kHeadDim % 64 == 0, "swizzle needs ≥ 8 chunks a row");
  static_assert(kBlockM == kBlockN, "causal tile ranges below assume square tiles");
  static_assert((kBlockM * kHeadDim / kChunk) % kThreads == 0, "whole tiles per cp.async sweep");
  static_assert(kStages == 1 || kStages == 2, "single or double buffering");
  static_assert(kScoreBlocks % kRoundBlocks == 0 && (kRoundBlocks % 2 == 0 || kRoundBlocks == 1),
                "whole rounds of n8-block pairs, or the one block");
};

// Thread-to-element map of a C fragment: row in the warp's m16 slab and column in an
// n8 block, for register `idx` (0..3) of lane `lane`.
__device__ inline int FragRow(int lane, int idx) { return (lane >> 2) + 8 * (idx >> 1); }
__device__ inline int FragCol(int lane, int idx) { return 2 * (lane & 3) + (idx & 1); }

// Cooperative async copy of rows [row0, row0 + kRows) of one head of a [B, T, heads, D]
// operand into a swizzled [kRows, D] tile; rows ≥ T are zero-filled.
template <typename Traits, int kRows, typename Element>
__device__ inline void LoadRowsAsync(Element* tile, const Element* head_base, int64_t row_stride,
                                     int row0, int T, int tid) {
  constexpr int kChunksPerRow = Traits::kHeadDim / Traits::kChunk;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % Traits::kThreads == 0, "whole tiles per sweep");
#pragma unroll
  for (int it = 0; it < kChunks / Traits::kThreads; ++it) {
    const int idx = tid + it * Traits::kThreads;
    const int r = idx / kChunksPerRow, ch = idx % kChunksPerRow;
    const bool valid = row0 + r < T;
    const Element* src =
        valid ? head_base + static_cast<int64_t>(row0 + r) * row_stride + ch * Traits::kChunk
              : head_base;
    CpAsync16(tile + Swizzle<Traits::kHeadDim>(r, ch * Traits::kChunk), src, valid);
  }
}

// Base pointer of head h of batch b in an operand.
// Per-row partial sums of pass 1 (each thread: its columns of rows g and g + 8), in the
// mma.sync pass 1 and in its wgmma form (sm90/bob_sm90.cuh).
enum RowSum : int {
  kSumC = 0,  // c = Σ P∘G (3), fp32 values: the state pass 2 uses
  kSumA,      // a = Σ X (7), fp32 values: gives e (8)
  kSumPGR,    // Σ r(P∘G): the 16-bit P∘G that (P∘G) V consumed
  kSumXR,     // Σ r(X)
  kSumDSR,    // Σ r(dS)
  kSumPR,     // Σ r(P)
  kNumRowSums
};

template <typename Element>
__device__ inline const Element* HeadBase(const BobOperand& x, int b, int h) {
  return static_cast<const Element*>(x.ptr) + b * x.sb + h * x.sh;
}
template <typename Element>
__device__ inline Element* HeadBaseOut(const BobOperand& x, int b, int h) {
  return static_cast<Element*>(x.ptr) + b * x.sb + h * x.sh;
}

}  // namespace flashtick::cuda::bob
