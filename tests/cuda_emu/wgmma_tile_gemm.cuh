// One warpgroup's D = A·B (64×64, K = 64) through the Hopper wgmma layer
// (kernels/cuda/attention/sm90/wgmma.cuh), the same code on the CPU emulator
// (tests/cuda_emu/wgmma_emu_test.cc) and on an sm_90a GPU (tests/cuda_ops/wgmma_gpu_test.cc),
// so a layout the emulator accepts is checked against the hardware in one run.
// The warpgroup writes A and B into shared memory itself, with the 128-byte swizzle the
// way a kernel (or TMA's SWIZZLE_128B) writes them, 16-byte chunk c of row r at
// r·128 + (c ^ r % 8)·16, or as "interleave" core matrices; the wgmma reads them through
// the descriptors' canonical layouts, so the two formulations check each other. Cases:
//   kKMajorSw128    A and B K-major, 128-byte swizzle (S = Q·Kᵀ: Q and K rows are D-contiguous)
//   kBMnMajorSw128  B MN-major, 128-byte swizzle (O = P·V: V rows are D-contiguous, D is N)
//   kARegisters     A from registers (P stays in registers after the softmax), B K-major
//   kInterleave     no swizzle: 8×16-byte core matrices placed through LBO and SBO
//   kAMnMajorSw128  A MN-major, 128-byte swizzle (dQ = dS·K with dSᵀ stored [keys, queries])
// a [64, 64] row-major, [M, K] or, for kAMnMajorSw128, [K, M]; b [64, 64] row-major, [N, K]
// or, for kBMnMajorSw128, [K, N];
// d_init and d_out [64, 64] row-major fp32; d_out = d_init·accumulate + A·B.
#pragma once

#include <cstdint>

#include "kernels/cuda/attention/sm90/wgmma.cuh"
#include "tests/cuda_emu/wgmma_tile_case.h"

namespace flashtick::testing {

// Interleave, K-major: core matrices of 8 rows × 8 elements (128 B), LBO = 128 B apart in
// k and SBO = 256 B apart in rows; the four k16 slices 2 KB apart.
__host__ __device__ inline uint32_t InterleaveOffset(int row, int k) {
  const int slice = k / 16, kk = k % 16;
  return static_cast<uint32_t>(slice * 2048 + (row / 8) * 256 + (kk / 8) * 128 + (row % 8) * 16 +
                               (kk % 8) * 2);
}

// Run by the 128 threads of one CTA with 2·kWgmmaTileBytes of dynamic shared memory.
template <typename Elem>
__device__ inline void WgmmaTileGemm(WgmmaCase c, bool accumulate, const uint16_t* a,
                                     const uint16_t* b, const float* d_init, float* d_out,
                                     unsigned char* smem) {
  using cuda::sm90::GmmaDesc;
  using cuda::sm90::Sw128Offset;
  using cuda::sm90::GmmaDescAdvance;
  using cuda::sm90::SmemSwizzle;
  constexpr int kT = kWgmmaTile;
  const int tid = static_cast<int>(threadIdx.x);
  unsigned char* sa = smem;
  unsigned char* sb = smem + kWgmmaTileBytes;
  for (int i = tid; i < kT * kT; i += cuda::sm90::kWarpgroupThreads) {
    const int r = i / kT, col = i % kT;
    const uint32_t off = c == WgmmaCase::kInterleave ? InterleaveOffset(r, col) : Sw128Offset(r, col);
    *reinterpret_cast<uint16_t*>(sa + off) = a[i];
    *reinterpret_cast<uint16_t*>(sb + off) = b[i];  // [N, K] or [K, N]: rows of 64 either way
  }
  cuda::sm90::FenceProxyAsync();  // the stores, before wgmma reads them through the async proxy
  __syncthreads();
  const bool b_mn = c == WgmmaCase::kBMnMajorSw128, a_mn = c == WgmmaCase::kAMnMajorSw128;
  const int w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
  float d[32];
  for (int j = 0; j < 8; ++j)
    for (int v = 0; v < 4; ++v)
      d[4 * j + v] = d_init[(16 * w + g + 8 * (v / 2)) * kT + 8 * j + 2 * t + v % 2];
  const uint32_t base_a = cuda::sm90::SmemAddress(sa), base_b = cuda::sm90::SmemAddress(sb);
  const bool inter = c == WgmmaCase::kInterleave;
  const uint64_t da = inter ? GmmaDesc(base_a, SmemSwizzle::kNone, 128, 256)
                      : a_mn ? GmmaDesc(base_a, SmemSwizzle::k128B, 8192, 1024)
                             : GmmaDesc(base_a, SmemSwizzle::k128B, 16, 1024);
  const uint64_t db = inter ? GmmaDesc(base_b, SmemSwizzle::kNone, 128, 256)
                      : b_mn ? GmmaDesc(base_b, SmemSwizzle::k128B, 8192, 1024)
                             : GmmaDesc(base_b, SmemSwizzle::k128B, 16, 1024);
  // A's fragments of all four k16 steps, alive until the wait: wgmma may read its A
  // registers any time before wgmma.wait_group (PTX ISA), so they must not be reused.
  uint32_t frag[kT / 16][4];
  if (c == WgmmaCase::kARegisters)
    for (int ks = 0; ks < kT / 16; ++ks)
      for (int reg = 0; reg < 4; ++reg) {
        const int row = 16 * w + g + 8 * (reg % 2), col = 16 * ks + 2 * t + 8 * (reg / 2);
        frag[ks][reg] = uint32_t(a[row * kT + col]) | (uint32_t(a[row * kT + col + 1]) << 16);
      }
  cuda::sm90::WgmmaFence();  // d and the A registers were written by ordinary instructions
  for (int ks = 0; ks < kT / 16; ++ks) {
    // The k16 step: 32 bytes along a swizzled K-major row, 16 rows (2 KB) down an
    // MN-major tile, the next 2 KB slice of the interleaved tile.
    const uint32_t step_a = inter || a_mn ? 2048u * ks : 32u * ks;
    const uint32_t step_b = inter || b_mn ? 2048u * ks : 32u * ks;
    const bool acc = accumulate || ks > 0;
    if (c == WgmmaCase::kARegisters) {
      cuda::sm90::Wgmma64x64Rs<Elem, false>(d, frag[ks], GmmaDescAdvance(db, step_b), acc);
    } else if (a_mn) {
      cuda::sm90::Wgmma64x64Ss<Elem, false, true>(d, GmmaDescAdvance(da, step_a),
                                                 GmmaDescAdvance(db, step_b), acc);
    } else if (b_mn) {
      cuda::sm90::Wgmma64x64Ss<Elem, true>(d, GmmaDescAdvance(da, step_a),
                                          GmmaDescAdvance(db, step_b), acc);
    } else {
      cuda::sm90::Wgmma64x64Ss<Elem, false>(d, GmmaDescAdvance(da, step_a),
                                           GmmaDescAdvance(db, step_b), acc);
    }
  }
  cuda::sm90::WgmmaCommit();
  cuda::sm90::WgmmaWait<0>();
  for (int j = 0; j < 8; ++j)
    for (int v = 0; v < 4; ++v)
      d_out[(16 * w + g + 8 * (v / 2)) * kT + 8 * j + 2 * t + v % 2] = d[4 * j + v];
}

}  // namespace flashtick::testing
