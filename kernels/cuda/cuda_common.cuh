// Device helpers shared by flash_cuda's non-attention kernels (include from .cu only):
// fp32 views of the storage types, 16-byte vector loads and stores, warp reductions,
// and the host-side test for whether rows can be read in 16-byte vectors.
// Storage dtypes: float (fp32), __nv_bfloat16, __half; all math is fp32 (fp64 only in
// Cast). A "vector" is kVec consecutive elements of one row: 16 bytes, so one warp
// moves 512 contiguous bytes per instruction when the rows allow it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/tensor.h"

namespace flashtick::cuda {

inline constexpr int kWarp = 32;
inline constexpr unsigned kFullMask = 0xffffffffu;
inline constexpr int kVecBytes = 16;

// Elements per 16-byte vector for storage type T (4 fp32, 8 bf16/fp16, 2 fp64).
template <typename T>
inline constexpr int kVecOf = kVecBytes / static_cast<int>(sizeof(T));

// ---- storage <-> fp32 ----------------------------------------------------------
__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }

template <typename T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);  // round to nearest even, as the CPU Cast
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }

// ---- vector loads and stores -------------------------------------------------------
// kVec consecutive elements as one aligned access (16 bytes when kVec = kVecOf<T>;
// a plain scalar when kVec = 1). The caller guarantees alignment (RowsVectorizable).
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

template <typename T, int kVec>
__device__ __forceinline__ void LoadVec(const T* p, float (&out)[kVec]) {
  const Pack<T, kVec> pk = *reinterpret_cast<const Pack<T, kVec>*>(p);
#pragma unroll
  for (int i = 0; i < kVec; ++i) out[i] = ToFloat(pk.v[i]);
}

template <typename T, int kVec>
__device__ __forceinline__ void StoreVec(T* p, const float (&in)[kVec]) {
  Pack<T, kVec> pk;
#pragma unroll
  for (int i = 0; i < kVec; ++i) pk.v[i] = FromFloat<T>(in[i]);
  *reinterpret_cast<Pack<T, kVec>*>(p) = pk;
}

// ---- warp reductions (every lane gets the result) -------------------------------------
__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

__device__ __forceinline__ float WarpMax(float v) {
#pragma unroll
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// ---- host side ------------------------------------------------------------------------
// One row tensor: element pointer and row stride in elements.
struct RowPtr {
  const void* p = nullptr;
  int64_t stride = 0;
};

inline bool Aligned(const void* p, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(bytes) == 0;
}

// Rows of `cols` elements of `elem_bytes` at p (stride in elements) can be read as
// whole vectors of `vec` elements: base aligned to the vector, every row start
// aligned, no ragged tail. A null or empty tensor never blocks vectorisation.
inline bool RowsVectorizable(const void* p, int64_t stride, int64_t cols, int64_t rows,
                             int elem_bytes, int vec) {
  if (p == nullptr || rows == 0 || cols == 0) return true;
  return Aligned(p, int64_t{elem_bytes} * vec) && cols % vec == 0 &&
         (rows <= 1 || stride % vec == 0);
}

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Grid size for a grid-stride loop over n work items with `threads` per block:
// enough blocks to fill every SM a few times, never more than the work needs.
inline unsigned GridFor(int64_t n, int threads, int num_sms) {
  constexpr int kBlocksPerSm = 32;  // 32 × 256 threads = 4 waves at 2,048 resident threads per SM
  const int64_t want = CeilDiv(n, threads);
  const int64_t cap = static_cast<int64_t>(num_sms > 0 ? num_sms : 1) * kBlocksPerSm;
  return static_cast<unsigned>(want < 1 ? 1 : (want < cap ? want : cap));
}

}  // namespace flashtick::cuda
