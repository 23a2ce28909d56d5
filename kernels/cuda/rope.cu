// Rotary position embedding on CUDA (kernels/ops/rope.h; RoFormer eq. 34, interleaved
// pairs). Pair i < R/2 of the row at step t is rotated by a = (offset + t)·θ^(−2i/R):
//   y_2i = x_2i·cos a − x_2i+1·sin a;   y_2i+1 = x_2i·sin a + x_2i+1·cos a
// (sin negated for the inverse rotation, the VJP); pairs from R/2 on are copied
// (partial rotary). The angle is formed and reduced mod
// 2π in fp64, then sin/cos are taken in fp32 on the reduced angle: an fp32 angle would
// be off by ~1e-3 rad at t ≈ 23,400, a reduced one by ~1e-7. Each thread rotates the
// pairs of one 16-byte vector of one (b, t) in every head; B, T, H strides are free. With a
// position pointer the base position is read from device memory, so a captured decode
// step replays at the next position (kernels/ops/rope.h).
#include <cmath>
#include <cstdint>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kTwoPi = 6.283185307179586;
constexpr double kInvTwoPi = 0.15915494309189535;

// kElems consecutive elements (kElems/2 pairs) per thread; kVector: one aligned access.
// One thread takes one chunk of one (b, t) and rotates it in every head: the angles
// depend on t and the pair only, so each sin/cos (and its fp64 angle) is formed once per
// H rows instead of once per row, and the index arithmetic is done in Index (32-bit
// where the launch allows: 64-bit division is a long instruction sequence on the GPU,
// and with the fp64 angles it, not the bytes, bounded the one-per-row kernel).
template <typename T, int kElems, bool kVector, typename Index>
__global__ void __launch_bounds__(kThreads) rope_kernel(RopeParams p) {
  static_assert(kElems % 2 == 0, "whole pairs");
  constexpr int kPairs = kElems / 2;
  const Index chunks = static_cast<Index>(p.D / kElems);
  const Index steps = static_cast<Index>(p.T);
  const Index n = static_cast<Index>(p.B) * steps * chunks;
  const int64_t from_memory = p.position != nullptr ? max(0, *p.position) : 0;
  for (Index i = blockIdx.x * Index{blockDim.x} + threadIdx.x; i < n;
       i += Index{gridDim.x} * blockDim.x) {
    const Index chunk = i % chunks;
    const Index row = i / chunks;
    const int64_t t = row % steps, b = row / steps;
    const int64_t c0 = static_cast<int64_t>(chunk) * kElems;
    const double pos = static_cast<double>(p.position_offset + from_memory + t);
    float sn[kPairs], cs[kPairs];
#pragma unroll
    for (int j = 0; j < kPairs; ++j) {
      const int64_t pair_index = c0 / 2 + j;
      sn[j] = 0.0f;  // identity beyond the rotated dims
      cs[j] = 1.0f;
      if (2 * pair_index < p.R) {
        const double pair = static_cast<double>(pair_index);
        double a = pos * exp2(-2.0 * pair / static_cast<double>(p.R) * p.log2_theta);
        a -= kTwoPi * rint(a * kInvTwoPi);  // |a| ≤ π, exact to ~1e-12 rad
        sincosf(static_cast<float>(a), &sn[j], &cs[j]);
        sn[j] *= p.sin_sign;
      }
    }
    const T* xr = static_cast<const T*>(p.x) + b * p.xs[0] + t * p.xs[1] + c0;
    T* yr = static_cast<T*>(p.y) + b * p.ys[0] + t * p.ys[1] + c0;
    for (int64_t h = 0; h < p.H; ++h) {
      const T* x = xr + h * p.xs[2];
      T* y = yr + h * p.ys[2];
      float xv[kElems], out[kElems];
      if constexpr (kVector) {
        LoadVec<T, kElems>(x, xv);
      } else {
#pragma unroll
        for (int e = 0; e < kElems; ++e) xv[e] = ToFloat(x[e]);
      }
#pragma unroll
      for (int j = 0; j < kPairs; ++j) {
        const float x0 = xv[2 * j], x1 = xv[2 * j + 1];
        out[2 * j] = x0 * cs[j] - x1 * sn[j];
        out[2 * j + 1] = x0 * sn[j] + x1 * cs[j];
      }
      if constexpr (kVector) {
        StoreVec<T, kElems>(y, out);
      } else {
#pragma unroll
        for (int e = 0; e < kElems; ++e) y[e] = FromFloat<T>(out[e]);
      }
    }
  }
}

// Every (b, t, h) row start of a tensor is a multiple of vec elements (dims of extent
// 1 never step, so their strides do not matter).
bool StridesAligned(const RopeParams& p, const int64_t* s, int vec) {
  const int64_t ext[3] = {p.B, p.T, p.H};
  for (int d = 0; d < 3; ++d)
    if (ext[d] > 1 && s[d] % vec != 0) return false;
  return true;
}

template <typename T>
cudaError_t LaunchTyped(const RopeParams& p, int num_sms, cudaStream_t stream) {
  constexpr int kVec = kVecOf<T>;
  const bool vec = p.D % kVec == 0 && Aligned(p.x, kVecBytes) && Aligned(p.y, kVecBytes) &&
                   StridesAligned(p, p.xs, kVec) && StridesAligned(p, p.ys, kVec);
  const int elems = vec ? kVec : 2;
  const int64_t n = p.B * p.T * (p.D / elems);  // threads' items; each does H rows
  if (n == 0 || p.H == 0) return cudaSuccess;
  const unsigned grid = GridFor(n, kThreads, num_sms);
  // 32-bit indices when the last index plus one grid stride stays below 2^32.
  const bool small = n + static_cast<int64_t>(grid) * kThreads <= int64_t{UINT32_MAX};
  if (vec && small)
    rope_kernel<T, kVec, true, uint32_t><<<grid, kThreads, 0, stream>>>(p);
  else if (vec)
    rope_kernel<T, kVec, true, int64_t><<<grid, kThreads, 0, stream>>>(p);
  else if (small)
    rope_kernel<T, 2, false, uint32_t><<<grid, kThreads, 0, stream>>>(p);
  else
    rope_kernel<T, 2, false, int64_t><<<grid, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchRope(DType dtype, const RopeParams& p, int num_sms, cudaStream_t stream) {
  switch (dtype) {
    case DType::kF32: return LaunchTyped<float>(p, num_sms, stream);
    case DType::kBF16: return LaunchTyped<__nv_bfloat16>(p, num_sms, stream);
    case DType::kF16: return LaunchTyped<__half>(p, num_sms, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashtick::cuda
