// Device helpers for the FlashBoB kernels, on top of the Flash kernels' shared
// warp-level primitives (kernels/cuda/attention/flash_mma.cuh: mma.sync m16n8k16 with
// fp32 accumulate, ldmatrix, cp.async, 16-bit packing), so the same code also runs on
// the CPU emulator of tests/cuda_emu (FLASHTICK_CUDA_EMULATION). Adds the 4-byte
// cp.async for row statistics, the XOR swizzle and the fragment loaders in the exact
// operand patterns the two passes use (checked against numpy in tests/bob/emu).
//
// Fragment layouts (PTX ISA, mma.m16n8k16 with 16-bit A/B): g = lane / 4, t = lane % 4.
//   A 16×16 (4 regs): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B 16×8  (2 regs): b0 (k = 2t..2t+1, n = g), b1 (k = 2t+8.., n = g)
//   C 16×8  (4 f32):  c0 c1 (g, 2t..2t+1), c2 c3 (g+8, 2t..2t+1)
#pragma once

#include <cstdint>

#include "kernels/cuda/attention/flash_mma.cuh"

namespace flashtick::cuda::bob {

using flash::CpAsync16;
using flash::CpAsyncCommit;
using flash::CpAsyncWait;
using flash::LdMatrixX4;
using flash::LdMatrixX4Trans;

// The 16-bit element type's MMA and packing.
template <typename Element>
struct ElementTraits {
  __device__ static uint32_t Pack(float lo, float hi) { return flash::PackFloat2<Element>(lo, hi); }
  __device__ static float2 Unpack(uint32_t x) { return flash::UnpackFloat2<Element>(x); }
  __device__ static void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    const uint32_t b[2] = {b0, b1};
    flash::Mma16816<Element>(d, a, b);
  }
};

// 4-byte global→shared copy for row statistics; !valid zero-fills (src-size 0) and
// `src` must still be a mapped address.
#ifdef FLASHTICK_CUDA_EMULATION
inline void CpAsync4(void* dst, const void* src, bool valid) {
  *static_cast<float*>(dst) = valid ? *static_cast<const float*>(src) : 0.0f;
}
#else
__device__ inline void CpAsync4(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(flash::SmemAddr(dst)),
               "l"(src), "r"(valid ? 4 : 0));
}
#endif

// Shared tiles are [rows][kCols] 16-bit elements with the 16-byte chunks of each row
// XOR-swizzled by row % 8, so the 8 row addresses of an ldmatrix (and the 8 rows of a
// fragment store) fall in 8 distinct chunks: no bank conflicts. Needs ≥ 8 chunks a row.
template <int kCols>
__device__ inline int Swizzle(int row, int col) {
  static_assert(kCols % 64 == 0, "swizzled rows need at least eight 16-byte chunks");
  return row * kCols + ((((col >> 3) ^ row) & 7) | ((col >> 3) & ~7)) * 8 + (col & 7);
}

// A fragment (16×16) at (m0, k0) of a row-major swizzled tile [m][k].
template <int kCols, typename Element>
__device__ inline void LoadA(uint32_t (&a)[4], const Element* tile, int m0, int k0, int lane) {
  const int row = m0 + (lane & 15), col = k0 + 8 * (lane >> 4);
  LdMatrixX4(a, tile + Swizzle<kCols>(row, col));
}

// B fragments of two n8 blocks (n0, n0 + 8) at k-block k0, from a tile stored [n][k]
// (B = tileᵀ, e.g. K for S = Q Kᵀ). b[0], b[1]: block n0; b[2], b[3]: block n0 + 8.
template <int kCols, typename Element>
__device__ inline void LoadBFromNK(uint32_t (&b)[4], const Element* tile, int n0, int k0,
                                   int lane) {
  const int row = n0 + (lane & 7) + 8 * (lane >> 4), col = k0 + 8 * ((lane >> 3) & 1);
  LdMatrixX4(b, tile + Swizzle<kCols>(row, col));
}

// B fragments of one n8 block n0 at two consecutive k-blocks k0 and k0 + 16, from a
// tile stored [n][k]: b[0], b[1]: k-block k0; b[2], b[3]: k-block k0 + 16. For a warp
// whose score slice is a single n8 block (D = 256), so the x4 load is not half wasted.
template <int kCols, typename Element>
__device__ inline void LoadBFromNKTwoK(uint32_t (&b)[4], const Element* tile, int n0, int k0,
                                       int lane) {
  const int row = n0 + (lane & 7), col = k0 + 8 * (lane >> 3);
  LdMatrixX4(b, tile + Swizzle<kCols>(row, col));
}

// The same two B fragments from a tile stored [k][n] (e.g. V for O = P V), via .trans.
template <int kCols, typename Element>
__device__ inline void LoadBFromKN(uint32_t (&b)[4], const Element* tile, int k0, int n0,
                                   int lane) {
  const int row = k0 + (lane & 7) + 8 * ((lane >> 3) & 1), col = n0 + 8 * (lane >> 4);
  LdMatrixX4Trans(b, tile + Swizzle<kCols>(row, col));
}

// Stores a packed pair of 16-bit values at (row, col..col+1) of a swizzled tile.
template <int kCols, typename Element>
__device__ inline void StorePacked(Element* tile, int row, int col, uint32_t packed) {
  *reinterpret_cast<uint32_t*>(tile + Swizzle<kCols>(row, col)) = packed;
}

// Stores the fp32 pair (x0, x1) at (row, col..col+1) of a swizzled tile, rounded.
template <int kCols, typename Element>
__device__ inline void StorePair(Element* tile, int row, int col, float x0, float x1) {
  *reinterpret_cast<uint32_t*>(tile + Swizzle<kCols>(row, col)) =
      ElementTraits<Element>::Pack(x0, x1);
}

}  // namespace flashtick::cuda::bob
