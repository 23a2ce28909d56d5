// Rotary position embedding on CUDA (kernels/ops/rope.h; RoFormer eq. 34, interleaved
// pairs). Pair i < R/2 of the row at step t is rotated by a = (offset + t)·θ^(−2i/R):
//   y_2i = x_2i·cos a − x_2i+1·sin a;   y_2i+1 = x_2i·sin a + x_2i+1·cos a
// (sin negated for the inverse rotation, the VJP); pairs from R/2 on are copied
// (partial rotary). The angle is formed and reduced mod
// 2π in fp64, then sin/cos are taken in fp32 on the reduced angle: an fp32 angle would
// be off by ~1e-3 rad at t ≈ 23,400, a reduced one by ~1e-7. Each thread rotates the
// pairs of one 16-byte vector of one (b, t, h) row; B, T, H strides are free. With a
// position pointer the base position is read from device memory, so a captured decode
// step replays at the next position (kernels/ops/rope.h).
#include <cmath>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kTwoPi = 6.283185307179586;
constexpr double kInvTwoPi = 0.15915494309189535;

// kElems consecutive elements (kElems/2 pairs) per thread; kVector: one aligned access.
template <typename T, int kElems, bool kVector>
__global__ void __launch_bounds__(kThreads) rope_kernel(RopeParams p) {
  static_assert(kElems % 2 == 0, "whole pairs");
  const int64_t chunks = p.D / kElems;
  const int64_t n = p.B * p.T * p.H * chunks;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t chunk = i % chunks;
    int64_t row = i / chunks;
    const int64_t h = row % p.H;
    row /= p.H;
    const int64_t t = row % p.T, b = row / p.T;
    const int64_t c0 = chunk * kElems;
    const T* x = static_cast<const T*>(p.x) + b * p.xs[0] + t * p.xs[1] + h * p.xs[2] + c0;
    T* y = static_cast<T*>(p.y) + b * p.ys[0] + t * p.ys[1] + h * p.ys[2] + c0;
    float xv[kElems], out[kElems];
    if constexpr (kVector) {
      LoadVec<T, kElems>(x, xv);
    } else {
#pragma unroll
      for (int e = 0; e < kElems; ++e) xv[e] = ToFloat(x[e]);
    }
    const int64_t from_memory = p.position != nullptr ? max(0, *p.position) : 0;
    const double pos = static_cast<double>(p.position_offset + from_memory + t);
#pragma unroll
    for (int j = 0; j < kElems / 2; ++j) {
      const int64_t pair_index = c0 / 2 + j;
      float sn = 0.0f, cs = 1.0f;  // identity beyond the rotated dims
      if (2 * pair_index < p.R) {
        const double pair = static_cast<double>(pair_index);
        double a = pos * exp2(-2.0 * pair / static_cast<double>(p.R) * p.log2_theta);
        a -= kTwoPi * rint(a * kInvTwoPi);  // |a| ≤ π, exact to ~1e-12 rad
        sincosf(static_cast<float>(a), &sn, &cs);
        sn *= p.sin_sign;
      }
      const float x0 = xv[2 * j], x1 = xv[2 * j + 1];
      out[2 * j] = x0 * cs - x1 * sn;
      out[2 * j + 1] = x0 * sn + x1 * cs;
    }
    if constexpr (kVector) {
      StoreVec<T, kElems>(y, out);
    } else {
#pragma unroll
      for (int e = 0; e < kElems; ++e) y[e] = FromFloat<T>(out[e]);
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
  const int64_t n = p.B * p.T * p.H * (p.D / elems);
  if (n == 0) return cudaSuccess;
  const unsigned grid = GridFor(n, kThreads, num_sms);
  if (vec)
    rope_kernel<T, kVec, true><<<grid, kThreads, 0, stream>>>(p);
  else
    rope_kernel<T, 2, false><<<grid, kThreads, 0, stream>>>(p);
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
