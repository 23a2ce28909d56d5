// Warp-level primitives of the Flash kernels (sm_80+, also run on sm_90): the
// tensor-core MMA m16n8k16 with fp32 accumulators, ldmatrix (plain and transposed),
// cp.async 16-byte copies with zero-fill, and fp32 <-> 16-bit packing. Include from
// .cu files only. Under FLASHTICK_CUDA_EMULATION (tests/cuda_emu) the same names are
// provided by a CPU emulator, so the kernels' index math is unit-tested without a GPU.
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16"), per lane with
// g = lane / 4 and t = lane % 4:
//   A 16×16 (row-major), 4 regs of 2 elements:
//     a[0]: (g,   2t..2t+1)   a[1]: (g+8, 2t..2t+1)
//     a[2]: (g,   2t+8..+9)   a[3]: (g+8, 2t+8..+9)
//   B 16×8 (k × n), 2 regs:  b[0]: (k = 2t..2t+1, n = g)   b[1]: (k = 2t+8..+9, n = g)
//   C/D 16×8 fp32, 4 floats: c[0..1]: (g, 2t..2t+1)   c[2..3]: (g+8, 2t..2t+1)
// The lower column (or k) index sits in the low 16 bits of a register.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef FLASHTICK_CUDA_EMULATION
#include "tests/cuda_emu/emu_intrinsics.h"
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

namespace flashtick::cuda::flash {

inline constexpr int kWarpSize = 32;
inline constexpr float kLog2e = 1.4426950408889634f;  // exp(x) = exp2(x · log2 e)
inline constexpr float kLn2 = 0.6931471805599453f;

#ifndef FLASHTICK_CUDA_EMULATION

// The kernel's dynamic shared memory (16-byte cp.async and ldmatrix need ≥ 16-byte alignment).
#define FLASH_DYNAMIC_SMEM(name) extern __shared__ __align__(128) unsigned char name[]

// D = A·B + D for one m16n8k16 tile, fp32 accumulate. Elem: __nv_bfloat16 or __half.
template <typename Elem>
__device__ __forceinline__ void Mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);

template <>
__device__ __forceinline__ void Mma16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                        const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <>
__device__ __forceinline__ void Mma16816<__half>(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8×8 16-bit matrices; lanes 8i..8i+7 give the row addresses of matrix i, and
// r[i] receives matrix i in the C-fragment pattern (lane holds row g, cols 2t..2t+1).
__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddr(smem_row)));
}

// As LdMatrixX4, each matrix transposed: the lane holds (rows 2t..2t+1, col g).
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddr(smem_row)));
}

// 16 bytes global -> shared, bypassing L1 (.cg). valid = false writes 16 zero bytes
// and reads nothing (src-size 0), which is how ragged tiles are zero-padded.
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SmemAddr(smem)),
               "l"(gmem), "r"(src_bytes));
}

// 4 bytes global -> shared (.ca: 4-byte copies may not bypass L1); valid = false
// writes zeros. For row statistics, whose rows need not be 16-byte aligned.
__device__ __forceinline__ void CpAsync4(void* smem, const void* gmem, bool valid) {
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(SmemAddr(smem)), "l"(gmem),
               "r"(src_bytes));
}

__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// a ^ b, opaque to the optimiser (asm volatile is not hoisted out of loops): used for
// swizzled shared-memory offsets, which are cheaper to recompute than to keep live.
__device__ __forceinline__ int FlashXor(int a, int b) {
  int x;
  asm volatile("xor.b32 %0, %1, %2;\n" : "=r"(x) : "r"(a), "r"(b));
  return x;
}

// 2^x with the SFU (max rel. error 2^-22); ex2(−inf) = +0, which the -inf masks rely on.
__device__ __forceinline__ float FastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

#endif  // FLASHTICK_CUDA_EMULATION

// Bit copy between same-size types (memcpy: no strict-aliasing hazard on the host
// emulator; a register move on the device). The void* says the bytes are all there is
// to the 16-bit pair types, whose copy-assignment is user-provided.
template <typename To, typename From>
__device__ __forceinline__ To BitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast keeps the size");
  To to;
  memcpy(static_cast<void*>(&to), &from, sizeof(To));
  return to;
}

// Two fp32 -> one register of two 16-bit values (lo in the low half), rounded to nearest.
template <typename Elem>
__device__ __forceinline__ uint32_t PackFloat2(float lo, float hi);

template <>
__device__ __forceinline__ uint32_t PackFloat2<__nv_bfloat16>(float lo, float hi) {
  return BitCast<uint32_t>(__floats2bfloat162_rn(lo, hi));
}

template <>
__device__ __forceinline__ uint32_t PackFloat2<__half>(float lo, float hi) {
  return BitCast<uint32_t>(__floats2half2_rn(lo, hi));
}

// One register of two 16-bit values -> two fp32.
template <typename Elem>
__device__ __forceinline__ float2 UnpackFloat2(uint32_t v);

template <>
__device__ __forceinline__ float2 UnpackFloat2<__nv_bfloat16>(uint32_t v) {
  return __bfloat1622float2(BitCast<__nv_bfloat162>(v));
}

template <>
__device__ __forceinline__ float2 UnpackFloat2<__half>(uint32_t v) {
  return __half22float2(BitCast<__half2>(v));
}

// Reductions over the 4 lanes of a quad (the lanes sharing one accumulator row).
__device__ __forceinline__ float QuadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

__device__ __forceinline__ float QuadSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

}  // namespace flashtick::cuda::flash
