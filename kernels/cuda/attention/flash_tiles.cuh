// Tiles as types, loads and MMAs as verbs (after ThunderKittens): the shared-memory
// tile layout, the cp.async tile copy, the four ldmatrix fragment loaders, and the
// warp GEMM the Flash kernels are written in. Include from .cu files only.
//
// Shared tiles are row-major [kRows][kCols] 16-bit elements whose 16-byte chunks are
// XOR-swizzled by (row mod 8): chunk c of row r lives at chunk c ^ (r & 7). An
// ldmatrix reads one chunk from each of 8 consecutive rows; unswizzled, rows 128 or
// 256 bytes apart fall into the same banks (8-way conflict), swizzled they cover all
// 32 banks once. The cp.async writes and the P/dS register stores stay conflict-free.
//
// Operand patterns for D(m×n) += A(m×k)·B(k×n), each loading one 16-wide k step:
//   LoadA        A stored as [m][k]                  (Q, dS for dQ)
//   LoadATrans   A stored as [k][m], i.e. Aᵀ in smem (P for dV = Pᵀ dO, dS for dK)
//   LoadBnk      B stored as [n][k] (Bᵀ row-major)   (K for S = Q Kᵀ, V for dP = dO Vᵀ)
//   LoadBkn      B stored as [k][n]                   (V for O = P V, dO, Q, K as right operands)
// The B loaders fetch two adjacent n8 tiles (n0, n0 + 8) per ldmatrix.x4.
#pragma once

#include "kernels/cuda/attention/flash_mma.cuh"

namespace flashtick::cuda::flash {

template <int kRows_, int kCols_>
struct SmemTile {
  static constexpr int kRows = kRows_;
  static constexpr int kCols = kCols_;
  static constexpr int kChunkElems = 8;  // 16 bytes of 16-bit elements
  static constexpr int kChunks = kCols / kChunkElems;
  static constexpr int kSwizzleRows = 8;  // XOR pattern period: 8 chunks = 128 bytes = 32 banks
  static constexpr int kElems = kRows * kCols;
  static_assert(kCols % (kChunkElems * kSwizzleRows) == 0,
                "rows must span whole 128-byte swizzle groups (kCols multiple of 64)");
  static_assert((kCols & (kCols - 1)) == 0, "FragOffset's XOR needs a power-of-two row length");
  static_assert(kRows % 16 == 0, "tiles hold whole m16/k16 fragments");

  // Element offset of (row, col); col's chunk is swizzled, its position in the chunk kept.
  __host__ __device__ static constexpr int Offset(int row, int col) {
    return row * kCols + ((((col / kChunkElems) ^ (row % kSwizzleRows))) * kChunkElems) +
           col % kChunkElems;
  }

  // Offset of a lane's ldmatrix row: fragment origin (row_base, col_base) with
  // row_base % 8 == 0 and col_base % 16 == 0, plus the lane's (row_lane, chunk_lane ∈
  // {0, 1}). Equal to Offset(row_base + row_lane, col_base + 8·chunk_lane), written so
  // the origin enters only as "+ row_base·kCols" and "^ col_base" on a lane-only term:
  // (col_base/8 + c) ^ r = (col_base/8) ^ (c ^ r) since col_base/8 is even, and the
  // XOR stays inside the row since col_base < kCols, a power of two. The XOR is one
  // instruction at the load; FlashXor keeps the compiler from hoisting one result per
  // (k step, tile) out of the main loop (measured: ~20 registers and 80 bytes of
  // spills in the d = 64 backward).
  __device__ static int FragOffset(int row_base, int col_base, int row_lane, int chunk_lane) {
    const int lane_term = row_lane * kCols + ((chunk_lane ^ (row_lane % kSwizzleRows)) * kChunkElems);
    return FlashXor(lane_term, col_base) + row_base * kCols;
  }
};

// Copies rows [0, kRows) of a global tile (row stride in elements, last dim contiguous)
// into `smem` with cp.async; rows ≥ valid_rows are zero-filled without reading global
// memory (their source address is clamped to row 0, which is always valid). Thread
// tid copies chunk tid % kChunks of rows tid / kChunks + i·kRowStep: consecutive
// threads read consecutive 16-byte chunks of a row, and the source pointer advances
// by one 64-bit add per row step (a precomputed 64-bit offset per step would pin
// 2 registers each for the whole kernel).
template <typename Tile, int kThreads, typename Elem>
__device__ __forceinline__ void CopyTileAsync(Elem* smem, const Elem* gmem, int64_t row_stride,
                                              int valid_rows, int tid) {
  static_assert(kThreads % Tile::kChunks == 0, "a thread keeps one chunk column");
  constexpr int kRowStep = kThreads / Tile::kChunks;
  // A row step of 8 rows keeps the swizzle phase (row mod 8), so one destination offset
  // serves every step. A smaller step (4 rows: 128 threads on 256-wide rows, the d = 256
  // forward) cycles through kPhases phases: one offset per phase, each advanced by
  // kPhases row steps.
  static_assert(kRowStep % Tile::kSwizzleRows == 0 || Tile::kSwizzleRows % kRowStep == 0,
                "row steps cycle through whole swizzle phases");
  constexpr int kPhases = kRowStep % Tile::kSwizzleRows == 0 ? 1 : Tile::kSwizzleRows / kRowStep;
  static_assert(Tile::kRows % (kRowStep * kPhases) == 0, "every thread copies the same number of chunks");
  const int row0 = tid / Tile::kChunks;
  const int col = (tid % Tile::kChunks) * Tile::kChunkElems;
  Elem* dst[kPhases];
#pragma unroll
  for (int j = 0; j < kPhases; ++j) dst[j] = smem + Tile::Offset(row0 + j * kRowStep, col);
  const Elem* src = gmem + row0 * row_stride + col;
  const int64_t src_step = kRowStep * row_stride;
#pragma unroll
  for (int i = 0; i < Tile::kRows / kRowStep; ++i) {
    const bool valid = row0 + i * kRowStep < valid_rows;
    CpAsync16(dst[i % kPhases] + (i / kPhases) * kPhases * kRowStep * Tile::kCols, valid ? src : gmem, valid);
    src += src_step;
  }
}

// A fragment of the 16×16 block at (row0, k0) of an [m][k] tile.
template <typename Tile, typename Elem>
__device__ __forceinline__ void LoadA(uint32_t (&a)[4], const Elem* smem, int row0, int k0,
                                      int lane) {
  // Matrices 0..3 = (rows +0, k +0), (rows +8, k +0), (rows +0, k +8), (rows +8, k +8):
  // lane l addresses row l % 16, chunk l / 16.
  LdMatrixX4(a, smem + Tile::FragOffset(row0, k0, lane % 16, lane / 16));
}

// A fragment of the 16×16 block at (m0, k0) of A, from a tile that stores Aᵀ as [k][m].
template <typename Tile, typename Elem>
__device__ __forceinline__ void LoadATrans(uint32_t (&a)[4], const Elem* smem, int m0, int k0,
                                           int lane) {
  // a[i] = A rows m0 + 8·(i%2), k cols k0 + 8·(i/2) = stored rows k0 + 8·(i/2), cols m0 + 8·(i%2).
  const int mat = lane / 8;
  LdMatrixX4Trans(a, smem + Tile::FragOffset(k0, m0, lane % 8 + (mat / 2) * 8, mat % 2));
}

// B fragments of n tiles n0 and n0 + 8 at k step k0, from a tile stored as [n][k].
// b[0..1] belong to tile n0, b[2..3] to tile n0 + 8.
template <typename Tile, typename Elem>
__device__ __forceinline__ void LoadBnk(uint32_t (&b)[4], const Elem* smem, int n0, int k0,
                                        int lane) {
  // Matrices: (n +0, k +0), (n +0, k +8), (n +8, k +0), (n +8, k +8).
  const int mat = lane / 8;
  LdMatrixX4(b, smem + Tile::FragOffset(n0, k0, lane % 8 + (mat / 2) * 8, mat % 2));
}

// B fragments of n tiles n0 and n0 + 8 at k step k0, from a tile stored as [k][n].
template <typename Tile, typename Elem>
__device__ __forceinline__ void LoadBkn(uint32_t (&b)[4], const Elem* smem, int n0, int k0,
                                        int lane) {
  // Matrices (transposed): (k +0, n +0), (k +8, n +0), (k +0, n +8), (k +8, n +8).
  const int mat = lane / 8;
  LdMatrixX4Trans(b, smem + Tile::FragOffset(k0, n0, lane % 8 + (mat % 2) * 8, mat / 2));
}

// Warp GEMM over kKSteps k16 steps: acc[mt][nt] (tile rows 16·mt, cols 8·nt) +=
// A·B, with load_a(a, mt, ks) and load_b(b4, np, ks) filling the fragments of m tile
// mt and of n tiles 2·np, 2·np + 1 at k step ks. B fragments are loaded one pair at
// a time and used at once: holding a whole k step of B (2·kNT registers) beside
// 128+ accumulators is what made the 128×128 forward spill. kUnrollK bounds how many
// k steps the compiler may have in flight: fully unrolled, it hoists every step's
// ldmatrix ahead (the backward spilled 92–152 bytes; unrolled by 2, 0–16). Operands
// indexed by ks in registers (P in the forward) need the full unroll.
template <typename Elem, int kMT, int kNT, int kKSteps, int kUnrollK = kKSteps, typename LoadAFn,
          typename LoadBFn>
__device__ __forceinline__ void WarpGemm(float (&acc)[kMT][kNT][4], LoadAFn load_a,
                                         LoadBFn load_b) {
  static_assert(kNT % 2 == 0, "B fragments come in pairs of n8 tiles");
  static_assert(kKSteps % kUnrollK == 0, "whole unrolled groups of k steps");
#pragma unroll kUnrollK
  for (int ks = 0; ks < kKSteps; ++ks) {
    uint32_t a[kMT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) load_a(a[mt], mt, ks);
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      uint32_t b4[4];
      load_b(b4, np, ks);
      const uint32_t b_lo[2] = {b4[0], b4[1]}, b_hi[2] = {b4[2], b4[3]};
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        Mma16816<Elem>(acc[mt][2 * np], a[mt], b_lo);
        Mma16816<Elem>(acc[mt][2 * np + 1], a[mt], b_hi);
      }
    }
  }
}

template <int kMT, int kNT>
__device__ __forceinline__ void ZeroAcc(float (&acc)[kMT][kNT][4]) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.0f;
}

// Position of accumulator element e of tile (mt, nt) within the warp's block.
__device__ __forceinline__ int AccRow(int mt, int e, int lane) { return mt * 16 + lane / 4 + (e / 2) * 8; }
__device__ __forceinline__ int AccCol(int nt, int e, int lane) { return nt * 8 + (lane % 4) * 2 + e % 2; }

// Stores a warp's accumulators, packed as Elem pairs (pk[mt][nt][half] holds elements
// 2·half and 2·half + 1 of tile (mt, nt)), into a shared tile at block origin (row0,
// col0); each lane writes 4 bytes per (mt, nt, half), conflict-free under the swizzle.
template <typename Tile, typename Elem, int kMT, int kNT>
__device__ __forceinline__ void StorePackedToSmem(Elem* smem, const uint32_t (&pk)[kMT][kNT][2],
                                                  int row0, int col0, int lane) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = row0 + AccRow(mt, 2 * half, lane);
        const int col = col0 + AccCol(nt, 0, lane);
        *reinterpret_cast<uint32_t*>(smem + Tile::Offset(row, col)) = pk[mt][nt][half];
      }
}

}  // namespace flashtick::cuda::flash
