// Hopper warpgroup MMA (wgmma, PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-
// Accumulate"), the building block of our sm_90a attention kernels: the 128 threads of a
// warpgroup together compute D[64×N] (+)= A[64×16]·B[16×N] (N = 64 or 32) in fp32 from bf16/fp16
// operands, A from shared memory (a descriptor) or from registers, B from shared memory.
// Under FLASHTICK_CUDA_EMULATION (tests/cuda_emu) the same names run on the CPU emulator,
// which reads shared memory through the same descriptors, so the kernels' layouts and
// index math are tested without a GPU (tests/cuda_emu/wgmma_emu_test.cc).
//
// Shared-memory descriptor (PTX ISA, "Matrix Descriptor Format"), 64 bits:
//   bits  0–13 start address >> 4      16–29 leading-dimension byte offset (LBO) >> 4
//   bits 32–45 stride-dimension byte offset (SBO) >> 4      62–63 swizzle mode
//   (0 none "interleave", 1 128-byte, 2 64-byte, 3 32-byte); base offset 0 (tiles
//   aligned to their swizzle atom).
// The canonical layouts it describes, in 16-byte units, with W = 1, 2, 4, 8 units per
// swizzle row (none, 32, 64, 128 B), an element (mn, k) of the operand tile, T elements
// per unit (8 for 16-bit types) — as CUTLASS's make_gmma_desc documents them:
//   K-major:  mn = i0 + 8·i1, k = e + T·kk         unit = i0·W + i1·SBO + kk·(W = 1 ? LBO : 1)
//   MN-major: mn = e + T·(w + W·j), k = k0 + 8·k1  unit = w + j·LBO + k0·W + k1·SBO   (W > 1)
//                                                  unit = j·SBO + k0 + k1·LBO          (W = 1)
// and the byte address start + 16·unit + e·sizeof(elem), then swizzled: bits [4, 4+log2 W)
// ^= bits [7, 7+log2 W) of the shared-memory address (the hardware applies it to the
// address it forms, so a swizzled tile starts on a multiple of 8·16·W bytes and a k step
// inside the row just adds to the start address).
// Fragments, per thread of the warpgroup (warp w = thread / 32, g = lane / 4, t = lane % 4):
//   D 64×N fp32, N/2 floats: d[4j + 0..1] = (16w + g, 8j + 2t..2t+1), d[4j + 2..3] = (16w + g + 8, …)
//   A 64×16 from registers, 4 × 2 halves: a[0] (16w+g, 2t..) a[1] (16w+g+8, 2t..)
//     a[2] (16w+g, 2t+8..) a[3] (16w+g+8, 2t+8..)  — a warp's m16n8k16 A fragment
// The lower column (or k) sits in the low 16 bits of a register.
#pragma once

#include <cstdint>

#include "kernels/cuda/attention/flash_mma.cuh"

namespace flashtick::cuda::sm90 {

inline constexpr int kWarpgroupThreads = 128;

enum class SmemSwizzle : uint32_t { kNone = 0, k128B = 1, k64B = 2, k32B = 3 };

// 16-byte units per swizzle row: W in the layouts above.
constexpr int SwizzleUnits(SmemSwizzle s) {
  return s == SmemSwizzle::k128B ? 8 : s == SmemSwizzle::k64B ? 4 : s == SmemSwizzle::k32B ? 2 : 1;
}

// Byte offset of 16-bit element (row, col) of a [rows, 64] tile of 128-byte rows in the
// 128-byte swizzle, the layout a k128B descriptor (K- or MN-major) reads and TMA's
// SWIZZLE_128B writes: 16-byte chunk c of row r at r·128 + (c ^ r % 8)·16.
__host__ __device__ constexpr uint32_t Sw128Offset(int row, int col) {
  return static_cast<uint32_t>(row * 128 + ((col / 8) ^ (row % 8)) * 16 + (col % 8) * 2);
}

// The descriptor of an operand tile at shared-memory address `smem_addr` (SmemAddress).
__host__ __device__ constexpr uint64_t GmmaDesc(uint32_t smem_addr, SmemSwizzle swizzle,
                                                uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return static_cast<uint64_t>((smem_addr >> 4) & 0x3fff) |
         static_cast<uint64_t>((lbo_bytes >> 4) & 0x3fff) << 16 |
         static_cast<uint64_t>((sbo_bytes >> 4) & 0x3fff) << 32 |
         static_cast<uint64_t>(swizzle) << 62;
}

// The descriptor of the same layout `bytes` further on (a k step inside a swizzle row):
// only the start address moves, as CUTLASS's DescriptorIterator does.
__host__ __device__ constexpr uint64_t GmmaDescAdvance(uint64_t desc, uint32_t bytes) {
  return (desc & ~uint64_t{0x3fff}) | ((desc + (bytes >> 4)) & 0x3fff);
}

#ifdef FLASHTICK_CUDA_EMULATION

inline uint32_t SmemAddress(const void* p) { return ::flashtick::emu::SmemAddress(p); }
inline void FenceProxyAsync() {}
inline void WgmmaFence() {}
inline void WgmmaCommit() { ::flashtick::emu::WgmmaCommit(); }
template <int kPending>
inline void WgmmaWait() {
  ::flashtick::emu::WgmmaWait(kPending);
}
// D (+)= A·B, m64n64k16; kTransB: B is MN-major (N contiguous, e.g. V [keys, D] in P·V);
// kTransA: A is MN-major (M contiguous, e.g. dSᵀ stored [keys, queries] as dS in dS·K).
template <typename Elem, bool kTransB, bool kTransA = false>
inline void Wgmma64x64Ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  ::flashtick::emu::Wgmma(d, 64, nullptr, desc_a, desc_b, kTransB,
                          std::is_same_v<Elem, __nv_bfloat16>, accumulate, kTransA);
}
template <typename Elem, bool kTransB>
inline void Wgmma64x64Rs(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b, bool accumulate) {
  ::flashtick::emu::Wgmma(d, 64, a, 0, desc_b, kTransB, std::is_same_v<Elem, __nv_bfloat16>,
                          accumulate, false);
}
// The m64n32k16 forms (16 accumulators a thread), for score tiles whose m64n64 form
// would not fit the register budget beside the resident accumulators (bob_sm90.cuh).
template <typename Elem, bool kTransB, bool kTransA = false>
inline void Wgmma64x32Ss(float (&d)[16], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  ::flashtick::emu::Wgmma(d, 32, nullptr, desc_a, desc_b, kTransB,
                          std::is_same_v<Elem, __nv_bfloat16>, accumulate, kTransA);
}
template <typename Elem, bool kTransB>
inline void Wgmma64x32Rs(float (&d)[16], const uint32_t (&a)[4], uint64_t desc_b, bool accumulate) {
  ::flashtick::emu::Wgmma(d, 32, a, 0, desc_b, kTransB, std::is_same_v<Elem, __nv_bfloat16>,
                          accumulate, false);
}

#else

__device__ __forceinline__ uint32_t SmemAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// wgmma exists only in sm_90a code (the "a" feature set); elsewhere these trap, and the
// dispatcher never picks an sm90a kernel path on another GPU.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FLASHTICK_WGMMA(...) asm volatile(__VA_ARGS__)
#else
#define FLASHTICK_WGMMA(...) __trap()
#endif

// Makes this thread's writes to shared memory (stores, cp.async once waited for) visible
// to the async proxy that wgmma and TMA read through (PTX ISA, "Proxies"); each writer
// fences, then a barrier, then the wgmma.
__device__ __forceinline__ void FenceProxyAsync() {
  FLASHTICK_WGMMA("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Orders this warpgroup's register accesses before the next wgmma reads or writes them.
__device__ __forceinline__ void WgmmaFence() {
  FLASHTICK_WGMMA("wgmma.fence.sync.aligned;\n" ::: "memory");
}
// Closes the group of wgmma issued since the last commit.
__device__ __forceinline__ void WgmmaCommit() {
  FLASHTICK_WGMMA("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most kPending committed groups are still running.
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  FLASHTICK_WGMMA("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

#define FLASHTICK_D32_OPERANDS                                                             \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),      \
      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),           \
      "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),        \
      "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),        \
      "+f"(d[31])
#define FLASHTICK_D32_LIST                                                                 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
  "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

// D (+)= A·B, m64n64k16, A and B from shared memory; kTransB: B is MN-major; kTransA:
// A is MN-major.
template <typename Elem, bool kTransB, bool kTransA = false>
__device__ __forceinline__ void Wgmma64x64Ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                             bool accumulate) {
  if constexpr (std::is_same_v<Elem, __nv_bfloat16>) {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " FLASHTICK_D32_LIST
                    ", %32, %33, p, 1, 1, %36, %35;\n}\n"
                    : FLASHTICK_D32_OPERANDS
                    : "l"(desc_a), "l"(desc_b), "r"(int32_t(accumulate)), "n"(int32_t(kTransB)),
                      "n"(int32_t(kTransA)));
  } else {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " FLASHTICK_D32_LIST
                    ", %32, %33, p, 1, 1, %36, %35;\n}\n"
                    : FLASHTICK_D32_OPERANDS
                    : "l"(desc_a), "l"(desc_b), "r"(int32_t(accumulate)), "n"(int32_t(kTransB)),
                      "n"(int32_t(kTransA)));
  }
}

// D (+)= A·B, m64n64k16, A from registers (the A fragment above), B from shared memory.
template <typename Elem, bool kTransB>
__device__ __forceinline__ void Wgmma64x64Rs(float (&d)[32], const uint32_t (&a)[4],
                                             uint64_t desc_b, bool accumulate) {
  if constexpr (std::is_same_v<Elem, __nv_bfloat16>) {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " FLASHTICK_D32_LIST
                    ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                    : FLASHTICK_D32_OPERANDS
                    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                      "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
  } else {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " FLASHTICK_D32_LIST
                    ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                    : FLASHTICK_D32_OPERANDS
                    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                      "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
  }
}

#define FLASHTICK_D16_OPERANDS                                                             \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),      \
      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),           \
      "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define FLASHTICK_D16_LIST \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"

// D (+)= A·B, m64n32k16, A and B from shared memory (the m64n64 form's operands, N = 32).
template <typename Elem, bool kTransB, bool kTransA = false>
__device__ __forceinline__ void Wgmma64x32Ss(float (&d)[16], uint64_t desc_a, uint64_t desc_b,
                                             bool accumulate) {
  if constexpr (std::is_same_v<Elem, __nv_bfloat16>) {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " FLASHTICK_D16_LIST
                    ", %16, %17, p, 1, 1, %20, %19;\n}\n"
                    : FLASHTICK_D16_OPERANDS
                    : "l"(desc_a), "l"(desc_b), "r"(int32_t(accumulate)), "n"(int32_t(kTransB)),
                      "n"(int32_t(kTransA)));
  } else {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " FLASHTICK_D16_LIST
                    ", %16, %17, p, 1, 1, %20, %19;\n}\n"
                    : FLASHTICK_D16_OPERANDS
                    : "l"(desc_a), "l"(desc_b), "r"(int32_t(accumulate)), "n"(int32_t(kTransB)),
                      "n"(int32_t(kTransA)));
  }
}

// D (+)= A·B, m64n32k16, A from registers, B from shared memory.
template <typename Elem, bool kTransB>
__device__ __forceinline__ void Wgmma64x32Rs(float (&d)[16], const uint32_t (&a)[4],
                                             uint64_t desc_b, bool accumulate) {
  if constexpr (std::is_same_v<Elem, __nv_bfloat16>) {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " FLASHTICK_D16_LIST
                    ", {%16, %17, %18, %19}, %20, p, 1, 1, %22;\n}\n"
                    : FLASHTICK_D16_OPERANDS
                    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                      "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
  } else {
    FLASHTICK_WGMMA("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " FLASHTICK_D16_LIST
                    ", {%16, %17, %18, %19}, %20, p, 1, 1, %22;\n}\n"
                    : FLASHTICK_D16_OPERANDS
                    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                      "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
  }
}

#undef FLASHTICK_D16_OPERANDS
#undef FLASHTICK_D16_LIST
#undef FLASHTICK_D32_OPERANDS
#undef FLASHTICK_D32_LIST
#undef FLASHTICK_WGMMA

#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace flashtick::cuda::sm90
