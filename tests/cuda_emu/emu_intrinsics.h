// A CPU emulator for the warp-level CUDA the Flash kernels use, so their index math
// (fragment layouts, swizzles, masks, online softmax, GQA and stride handling) runs
// in a unit test on machines without a GPU. kernels/cuda/attention/flash_mma.cuh
// includes this header instead of its PTX when FLASHTICK_CUDA_EMULATION is defined.
// Each CUDA thread of a CTA is a coroutine (ucontext); warp collectives (mma.sync,
// ldmatrix, shuffles) and __syncthreads block the coroutine until every lane (or
// thread) has arrived, then run with the PTX ISA's fragment semantics. cp.async
// copies at once (the barriers the kernels already have order it); atomics are plain
// adds (one OS thread). Not emulated: timing, bank conflicts, asynchronous-copy races.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <type_traits>

#define __launch_bounds__(...)
// Static __shared__ arrays would become per-thread stack arrays here; kernels use
// FLASH_DYNAMIC_SMEM instead, and this makes any other use a compile error.
#undef __shared__
#define __shared__ FLASHTICK_EMULATION_SUPPORTS_ONLY_FLASH_DYNAMIC_SMEM
#define FLASH_DYNAMIC_SMEM(name) unsigned char* name = ::flashtick::emu::DynamicSmem()

namespace flashtick::emu {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

struct ThreadState {
  Dim3 thread_idx, block_idx, grid_dim;
};

// The coroutine running now.
ThreadState& Current();
unsigned char* DynamicSmem();

void SyncThreads();
float ShflXor(float v, int lane_mask);
void MmaBf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
void MmaF16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
void LdMatrix(uint32_t (&r)[4], const void* row_addr, bool trans);
// The shared-memory address of p (its offset in the CTA's dynamic shared memory), what
// __cvta_generic_to_shared gives on the GPU.
uint32_t SmemAddress(const void* p);
// wgmma m64nNk16 (kernels/cuda/attention/sm90/wgmma.cuh), a warpgroup collective: the
// 128 threads' d (N/2 floats each) (+)= A·B once waited for, A from the threads' registers `a` (4 each)
// when non-null, else from shared memory through desc_a; B through desc_b, MN-major when
// trans_b. Operands are read through the descriptors' canonical layouts and swizzle.
void Wgmma(float* d, int n, const uint32_t* a, uint64_t desc_a, uint64_t desc_b, bool trans_b,
           bool bf16, bool accumulate, bool trans_a);
// mbarrier and TMA (kernels/cuda/attention/sm90/tma.cuh). A barrier is 8 bytes of shared
// memory whose state the emulator keeps beside it; a phase completes when its arrivals
// are in and its transaction bytes are back to zero. MbarTryWait(bar, parity) is true
// once the phase of that parity has completed. Yield hands the CPU to the other threads
// (a spin on try_wait); a pass in which every live thread only spins is a deadlock.
struct TmaDesc2d {
  const void* base = nullptr;
  uint64_t dims[2] = {0, 0};        // elements in x (contiguous), rows in y
  uint64_t row_stride_bytes = 0;
  uint32_t box[2] = {0, 0};         // the box copied: elements in x, rows in y
  int elem_bytes = 2;
  bool swizzle128 = false;          // CU_TENSOR_MAP_SWIZZLE_128B (128-byte box rows)
};
void MbarInit(void* bar, int count);
void MbarArriveExpectTx(void* bar, uint32_t bytes);
void MbarArrive(void* bar);
bool MbarTryWait(void* bar, int parity);
void Yield();
// The box at (x, y) into shared memory (swizzled as the map says; zeros outside the
// tensor), then its bytes completed on `bar`.
void TmaLoad2d(void* smem_dst, const TmaDesc2d& desc, int x, int y, void* bar);
// wgmma.commit_group and wgmma.wait_group N, warpgroup collectives: the issued wgmma run
// at the wait (asynchronous, as on the GPU; emu_runtime.cc says what is checked).
void WgmmaCommit();
void WgmmaWait(int pending);

// Runs fn once per CUDA thread of every CTA of the grid (CTAs one after another),
// with `smem_bytes` of zero-initialised dynamic shared memory per CTA.
void Launch(Dim3 grid, int block_threads, size_t smem_bytes, const std::function<void()>& fn);

}  // namespace flashtick::emu

#define threadIdx (::flashtick::emu::Current().thread_idx)
#define blockIdx (::flashtick::emu::Current().block_idx)
#define gridDim (::flashtick::emu::Current().grid_dim)

inline void __syncthreads() { ::flashtick::emu::SyncThreads(); }
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  return ::flashtick::emu::ShflXor(v, lane_mask);
}
inline float atomicAdd(float* p, float v) {
  const float old = *p;
  *p = old + v;
  return old;
}
template <typename T>
inline T min(T a, T b) {
  return std::min(a, b);
}
template <typename T>
inline T max(T a, T b) {
  return std::max(a, b);
}

namespace flashtick::cuda::flash {

template <typename Elem>
inline void Mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<Elem, __nv_bfloat16>)
    ::flashtick::emu::MmaBf16(d, a, b);
  else
    ::flashtick::emu::MmaF16(d, a, b);
}
inline void LdMatrixX4(uint32_t (&r)[4], const void* p) { ::flashtick::emu::LdMatrix(r, p, false); }
inline void LdMatrixX4Trans(uint32_t (&r)[4], const void* p) { ::flashtick::emu::LdMatrix(r, p, true); }
inline void CpAsync16(void* smem, const void* gmem, bool valid) {
  unsigned char* d = static_cast<unsigned char*>(smem);
  const unsigned char* s = static_cast<const unsigned char*>(gmem);
  for (int i = 0; i < 16; ++i) d[i] = valid ? s[i] : 0;
}
inline void CpAsync4(void* smem, const void* gmem, bool valid) {
  unsigned char* d = static_cast<unsigned char*>(smem);
  const unsigned char* s = static_cast<const unsigned char*>(gmem);
  for (int i = 0; i < 4; ++i) d[i] = valid ? s[i] : 0;
}
inline void CpAsyncCommit() {}
template <int kPending>
inline void CpAsyncWait() {}
inline float FastExp2(float x) { return std::exp2(x); }
inline int FlashXor(int a, int b) { return a ^ b; }

}  // namespace flashtick::cuda::flash
