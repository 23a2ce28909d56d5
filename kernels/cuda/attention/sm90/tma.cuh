// Hopper's tensor memory accelerator (TMA) and shared-memory barriers (mbarrier), for the
// producer/consumer pipelines of our sm_90a kernels (FlashAttention-3 §3.1: a producer
// warp issues TMA loads into a ring of stages, consumers wait on each stage's "full"
// barrier and release it through an "empty" one). Under FLASHTICK_CUDA_EMULATION the same
// names run on the CPU emulator (tests/cuda_emu), which copies a TMA box at once and keeps
// each barrier's phase, so a pipeline's order and phases are tested without a GPU.
// PTX ISA: "cp.async.bulk.tensor", "mbarrier". The tensor map is CUDA's CUtensorMap on the
// GPU (cuTensorMapEncodeTiled, through the runtime's driver entry point) and the
// emulator's TmaDesc2d on the CPU; kernels take it as a __grid_constant__ parameter.
#pragma once

#include <cstdint>

#include "kernels/cuda/attention/sm90/wgmma.cuh"

#ifndef FLASHTICK_CUDA_EMULATION
#include <cuda.h>
#include <cudaTypedefs.h>
#endif

namespace flashtick::cuda::sm90 {

#ifdef FLASHTICK_CUDA_EMULATION

using TmaDesc = ::flashtick::emu::TmaDesc2d;

inline void MbarInit(uint64_t* bar, int count) { ::flashtick::emu::MbarInit(bar, count); }
inline void MbarArriveExpectTx(uint64_t* bar, uint32_t bytes) {
  ::flashtick::emu::MbarArriveExpectTx(bar, bytes);
}
inline void MbarArrive(uint64_t* bar) { ::flashtick::emu::MbarArrive(bar); }
// Spins until the phase of `parity` has completed.
inline void MbarWait(uint64_t* bar, int parity) {
  while (!::flashtick::emu::MbarTryWait(bar, parity)) ::flashtick::emu::Yield();
}
inline void TmaLoad2d(void* smem_dst, const TmaDesc* desc, int x, int y, uint64_t* bar) {
  ::flashtick::emu::TmaLoad2d(smem_dst, *desc, x, y, bar);
}

// The emulator's map of a [rows, cols] 16-bit tensor with row stride `row_stride`
// elements, copied in boxes of box_cols × box_rows.
inline TmaDesc MakeTmaDesc2d(const void* base, uint64_t cols, uint64_t rows, uint64_t row_stride,
                             uint32_t box_cols, uint32_t box_rows, bool swizzle128) {
  TmaDesc d;
  d.base = base;
  d.dims[0] = cols, d.dims[1] = rows;
  d.row_stride_bytes = row_stride * 2;
  d.box[0] = box_cols, d.box[1] = box_rows;
  d.elem_bytes = 2;
  d.swizzle128 = swizzle128;
  return d;
}

#else

using TmaDesc = CUtensorMap;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FLASHTICK_SM90A(...) asm volatile(__VA_ARGS__)
#else
#define FLASHTICK_SM90A(...) __trap()
#endif

__device__ __forceinline__ void MbarInit(uint64_t* bar, int count) {
  FLASHTICK_SM90A("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddress(bar)), "r"(count)
                  : "memory");
}
__device__ __forceinline__ void MbarArriveExpectTx(uint64_t* bar, uint32_t bytes) {
  FLASHTICK_SM90A("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SmemAddress(bar)),
                  "r"(bytes)
                  : "memory");
}
__device__ __forceinline__ void MbarArrive(uint64_t* bar) {
  FLASHTICK_SM90A("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(SmemAddress(bar)) : "memory");
}
__device__ __forceinline__ void MbarWait(uint64_t* bar, int parity) {
  uint32_t done = 0;
  do {
    FLASHTICK_SM90A("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                    "selp.u32 %0, 1, 0, p;\n}\n"
                    : "=r"(done)
                    : "r"(SmemAddress(bar)), "r"(parity)
                    : "memory");
  } while (done == 0);
}
// The box at element column x, row y of the map's tensor into `smem_dst`, its bytes
// completed on `bar` (whose expected transaction count the caller raised first).
__device__ __forceinline__ void TmaLoad2d(void* smem_dst, const TmaDesc* desc, int x, int y,
                                          uint64_t* bar) {
  FLASHTICK_SM90A(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          SmemAddress(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(desc)), "r"(SmemAddress(bar)), "r"(x), "r"(y)
      : "memory");
}
#undef FLASHTICK_SM90A

// The map of a [rows, cols] 16-bit tensor (bf16 or fp16 bits; the copy does not convert)
// with row stride `row_stride` elements, copied in boxes of box_cols × box_rows, 128-byte
// swizzled when asked (box_cols · 2 must then be 128). Host code; cuTensorMapEncodeTiled
// is reached through cudaGetDriverEntryPointByVersion, so nothing links libcuda.
inline cudaError_t MakeTmaDesc2d(TmaDesc* map, const void* base, uint64_t cols, uint64_t rows,
                                 uint64_t row_stride, uint32_t box_cols, uint32_t box_rows,
                                 bool swizzle128) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  if (encode == nullptr) {
    cudaDriverEntryPointQueryResult q;
    void* fn = nullptr;
    // The v12000 ABI of the symbol, the one PFN_cuTensorMapEncodeTiled_v12000 declares.
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
    if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || fn == nullptr) return cudaErrorNotSupported;
    encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {row_stride * 2};  // bytes, for dims 1..
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(base), dims, strides,
                            box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            swizzle128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace flashtick::cuda::sm90
