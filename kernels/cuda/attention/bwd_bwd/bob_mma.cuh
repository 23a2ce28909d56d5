// Device helpers for the FlashBoB kernels: Ampere/Hopper warp-level tensor-core MMA
// (mma.sync m16n8k16, fp32 accumulate), ldmatrix fragment loads, cp.async copies and
// the XOR swizzle of shared-memory tiles. Written here because the shared attention
// helpers (kernels/cuda/attention/*.cuh) had not landed when these kernels were written.
//
// Fragment layouts (PTX ISA, mma.m16n8k16 with 16-bit A/B): g = lane / 4, t = lane % 4.
//   A 16×16 (4 regs): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B 16×8  (2 regs): b0 (k = 2t..2t+1, n = g), b1 (k = 2t+8.., n = g)
//   C 16×8  (4 f32):  c0 c1 (g, 2t..2t+1), c2 c3 (g+8, 2t..2t+1)
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace flashtick::cuda::bob {

// The 16-bit element type and its MMA instruction.
template <typename Element>
struct ElementTraits;

template <>
struct ElementTraits<__nv_bfloat16> {
  __device__ static uint32_t Pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ static float2 Unpack(uint32_t x) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&x));
  }
  __device__ static void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct ElementTraits<__half> {
  __device__ static uint32_t Pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ static float2 Unpack(uint32_t x) {
    return __half22float2(*reinterpret_cast<__half2*>(&x));
  }
  __device__ static void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

__device__ inline uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ inline void LdMatrixX4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ inline void LdMatrixX4Trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// 16-byte global→shared copy; when !valid the destination is zero-filled (src-size 0)
// and `src` must still be a mapped address (pass the tensor's base pointer).
__device__ inline void CpAsync16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0));
}

// 4-byte variant for row statistics (rows past T read 0).
__device__ inline void CpAsync4(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 4 : 0));
}

__device__ inline void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ inline void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

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
  LdMatrixX4(a, SmemAddr(tile + Swizzle<kCols>(row, col)));
}

// B fragments of two n8 blocks (n0, n0 + 8) at k-block k0, from a tile stored [n][k]
// (B = tileᵀ, e.g. K for S = Q Kᵀ). b[0], b[1]: block n0; b[2], b[3]: block n0 + 8.
template <int kCols, typename Element>
__device__ inline void LoadBFromNK(uint32_t (&b)[4], const Element* tile, int n0, int k0,
                                   int lane) {
  const int row = n0 + (lane & 7) + 8 * (lane >> 4), col = k0 + 8 * ((lane >> 3) & 1);
  LdMatrixX4(b, SmemAddr(tile + Swizzle<kCols>(row, col)));
}

// The same two B fragments from a tile stored [k][n] (e.g. V for O = P V), via .trans.
template <int kCols, typename Element>
__device__ inline void LoadBFromKN(uint32_t (&b)[4], const Element* tile, int k0, int n0,
                                   int lane) {
  const int row = k0 + (lane & 7) + 8 * ((lane >> 3) & 1), col = n0 + 8 * (lane >> 4);
  LdMatrixX4Trans(b, SmemAddr(tile + Swizzle<kCols>(row, col)));
}

// Stores the fp32 pair (x0, x1) at (row, col..col+1) of a swizzled tile, rounded.
template <int kCols, typename Element>
__device__ inline void StorePair(Element* tile, int row, int col, float x0, float x1) {
  *reinterpret_cast<uint32_t*>(tile + Swizzle<kCols>(row, col)) =
      ElementTraits<Element>::Pack(x0, x1);
}

}  // namespace flashtick::cuda::bob
