// Elementwise kernels over rows (kernels/ops/elementwise.h, gelu.h, gelu_bwd.h): Add,
// AddBias, Scale, GELU (tanh) forward, backward and backward-over-backward, and Cast.
// One grid-stride loop over (row, 16-byte vector) pairs: each thread loads kVec
// consecutive elements of every operand, applies the op in fp32 and stores once, so
// a warp moves 512 contiguous bytes per operand when the rows are vector-aligned
// (kVec = 1 otherwise). GELU math (kernels/ops/gelu_bwd.h):
//   u = k0·(x + k1·x³), t = tanh(u), s = 1 − t², u' = k0·(1 + 3k1·x²), u'' = 6k0k1·x
//   y = ½x(1 + t);  y' = ½(1 + t) + ½x·s·u';  y'' = s·u' + ½x·s·(u'' − 2t·u'²)
#include <type_traits>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 256;
constexpr float kK0 = 0.7978845608028654f;  // √(2/π)
constexpr float kK1 = 0.044715f;

struct GeluDerivs {
  float d1, d2;  // y'(x), y''(x)
};

__device__ __forceinline__ float GeluValue(float x) {
  const float u = kK0 * (x + kK1 * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}

__device__ __forceinline__ GeluDerivs GeluDerivatives(float x) {
  const float u = kK0 * (x + kK1 * x * x * x);
  const float t = tanhf(u);
  const float s = 1.0f - t * t;  // sech²(u); tanh saturates to ±1 for |u| > 9, so s → 0
  const float du = kK0 * (1.0f + 3.0f * kK1 * x * x);
  const float ddu = 6.0f * kK0 * kK1 * x;
  return {0.5f * (1.0f + t) + 0.5f * x * s * du, s * du + 0.5f * x * s * (ddu - 2.0f * t * du * du)};
}

// Per-element ops: in[kIn] -> out[kOut] at column `col`.
struct AddF {
  static constexpr int kIn = 2, kOut = 1;
  __device__ void operator()(const float* in, float* out, int64_t) const { out[0] = in[0] + in[1]; }
};
struct AddBiasF {
  static constexpr int kIn = 1, kOut = 1;
  const float* bias;
  __device__ void operator()(const float* in, float* out, int64_t col) const {
    out[0] = in[0] + __ldg(bias + col);
  }
};
struct ScaleF {
  static constexpr int kIn = 1, kOut = 1;
  float scale;
  __device__ void operator()(const float* in, float* out, int64_t) const { out[0] = scale * in[0]; }
};
struct GeluF {
  static constexpr int kIn = 1, kOut = 1;
  __device__ void operator()(const float* in, float* out, int64_t) const { out[0] = GeluValue(in[0]); }
};
struct GeluBwdF {  // in: X, dY   out: dX = dY·y'
  static constexpr int kIn = 2, kOut = 1;
  __device__ void operator()(const float* in, float* out, int64_t) const {
    out[0] = in[1] * GeluDerivatives(in[0]).d1;
  }
};
struct GeluBwdBwdF {  // in: X, dY, gdX   out: ∂X = gdX·dY·y'', ∂dY = gdX·y'
  static constexpr int kIn = 3, kOut = 2;
  __device__ void operator()(const float* in, float* out, int64_t) const {
    const GeluDerivs d = GeluDerivatives(in[0]);
    out[0] = in[2] * in[1] * d.d2;
    out[1] = in[2] * d.d1;
  }
};

template <typename T, int kVec, typename F>
__global__ void __launch_bounds__(kThreads) row_map_kernel(MapParams p, F f) {
  constexpr int kIn = F::kIn, kOut = F::kOut;
  const int64_t vcols = p.cols / kVec;
  const int64_t n = p.rows * vcols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / vcols;
    const int64_t c = (i - r * vcols) * kVec;
    float in[kIn][kVec];
#pragma unroll
    for (int k = 0; k < kIn; ++k)
      LoadVec<T, kVec>(static_cast<const T*>(p.t[k].p) + r * p.t[k].stride + c, in[k]);
    float out[kOut][kVec];
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      float x[kIn], y[kOut];
#pragma unroll
      for (int k = 0; k < kIn; ++k) x[k] = in[k][v];
      f(x, y, c + v);
#pragma unroll
      for (int k = 0; k < kOut; ++k) out[k][v] = y[k];
    }
#pragma unroll
    for (int k = 0; k < kOut; ++k)
      StoreVec<T, kVec>(static_cast<T*>(p.t[kIn + k].p) + r * p.t[kIn + k].stride + c, out[k]);
  }
}

template <typename T, typename F>
cudaError_t LaunchMapTyped(const MapParams& p, F f, int num_sms, cudaStream_t stream) {
  constexpr int kVec = kVecOf<T>;
  bool vec = true;
  for (int k = 0; k < F::kIn + F::kOut; ++k)
    vec = vec && RowsVectorizable(p.t[k].p, p.t[k].stride, p.cols, p.rows, sizeof(T), kVec);
  const int64_t n = p.rows * (vec ? p.cols / kVec : p.cols);
  if (n == 0) return cudaSuccess;
  const unsigned grid = GridFor(n, kThreads, num_sms);
  if (vec)
    row_map_kernel<T, kVec, F><<<grid, kThreads, 0, stream>>>(p, f);
  else
    row_map_kernel<T, 1, F><<<grid, kThreads, 0, stream>>>(p, f);
  return cudaGetLastError();
}

template <typename F>
cudaError_t LaunchMap(DType dtype, const MapParams& p, F f, int num_sms, cudaStream_t stream) {
  switch (dtype) {
    case DType::kF32: return LaunchMapTyped<float>(p, f, num_sms, stream);
    case DType::kBF16: return LaunchMapTyped<__nv_bfloat16>(p, f, num_sms, stream);
    case DType::kF16: return LaunchMapTyped<__half>(p, f, num_sms, stream);
    default: return cudaErrorInvalidValue;
  }
}

// ---- Cast ------------------------------------------------------------------------------
// Conversion with exactly one rounding: 16-bit and fp32 sources widen exactly to fp32
// (or fp64) first; fp64 sources round straight to the target.
template <typename S, typename D>
__device__ __forceinline__ D Convert(S v) {
  if constexpr (std::is_same_v<S, double>) {
    if constexpr (std::is_same_v<D, double>) return v;
    else if constexpr (std::is_same_v<D, float>) return __double2float_rn(v);
    else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __double2bfloat16(v);
    else return __double2half(v);
  } else {
    const float f = ToFloat(v);
    if constexpr (std::is_same_v<D, double>) return static_cast<double>(f);
    else return FromFloat<D>(f);
  }
}

template <typename S, typename D, int kVec>
__global__ void __launch_bounds__(kThreads)
    cast_kernel(int64_t rows, int64_t cols, const S* x, int64_t sx, D* y, int64_t sy) {
  const int64_t vcols = cols / kVec;
  const int64_t n = rows * vcols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / vcols;
    const int64_t c = (i - r * vcols) * kVec;
    const Pack<S, kVec> in = *reinterpret_cast<const Pack<S, kVec>*>(x + r * sx + c);
    Pack<D, kVec> out;
#pragma unroll
    for (int v = 0; v < kVec; ++v) out.v[v] = Convert<S, D>(in.v[v]);
    *reinterpret_cast<Pack<D, kVec>*>(y + r * sy + c) = out;
  }
}

template <typename S, typename D>
cudaError_t LaunchCastTyped(int64_t rows, int64_t cols, RowArg x, RowArg y, int num_sms,
                            cudaStream_t stream) {
  // One vector = 16 bytes of the wider type.
  constexpr int kVec = kVecBytes / static_cast<int>(sizeof(S) > sizeof(D) ? sizeof(S) : sizeof(D));
  const bool vec = RowsVectorizable(x.p, x.stride, cols, rows, sizeof(S), kVec) &&
                   RowsVectorizable(y.p, y.stride, cols, rows, sizeof(D), kVec);
  const int64_t n = rows * (vec ? cols / kVec : cols);
  if (n == 0) return cudaSuccess;
  const unsigned grid = GridFor(n, kThreads, num_sms);
  const S* xs = static_cast<const S*>(x.p);
  D* yd = static_cast<D*>(y.p);
  if (vec)
    cast_kernel<S, D, kVec><<<grid, kThreads, 0, stream>>>(rows, cols, xs, x.stride, yd, y.stride);
  else
    cast_kernel<S, D, 1><<<grid, kThreads, 0, stream>>>(rows, cols, xs, x.stride, yd, y.stride);
  return cudaGetLastError();
}

template <typename S>
cudaError_t LaunchCastFrom(DType dst, int64_t rows, int64_t cols, RowArg x, RowArg y, int num_sms,
                           cudaStream_t stream) {
  switch (dst) {
    case DType::kF32: return LaunchCastTyped<S, float>(rows, cols, x, y, num_sms, stream);
    case DType::kF64: return LaunchCastTyped<S, double>(rows, cols, x, y, num_sms, stream);
    case DType::kBF16: return LaunchCastTyped<S, __nv_bfloat16>(rows, cols, x, y, num_sms, stream);
    case DType::kF16: return LaunchCastTyped<S, __half>(rows, cols, x, y, num_sms, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchRowMap(MapOp op, DType dtype, const MapParams& p, int num_sms,
                         cudaStream_t stream) {
  switch (op) {
    case MapOp::kAdd: return LaunchMap(dtype, p, AddF{}, num_sms, stream);
    case MapOp::kAddBias: return LaunchMap(dtype, p, AddBiasF{p.bias}, num_sms, stream);
    case MapOp::kScale: return LaunchMap(dtype, p, ScaleF{p.scalar}, num_sms, stream);
    case MapOp::kGelu: return LaunchMap(dtype, p, GeluF{}, num_sms, stream);
    case MapOp::kGeluBwd: return LaunchMap(dtype, p, GeluBwdF{}, num_sms, stream);
    case MapOp::kGeluBwdBwd: return LaunchMap(dtype, p, GeluBwdBwdF{}, num_sms, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchCast(DType src, DType dst, int64_t rows, int64_t cols, RowArg x, RowArg y,
                       int num_sms, cudaStream_t stream) {
  switch (src) {
    case DType::kF32: return LaunchCastFrom<float>(dst, rows, cols, x, y, num_sms, stream);
    case DType::kF64: return LaunchCastFrom<double>(dst, rows, cols, x, y, num_sms, stream);
    case DType::kBF16: return LaunchCastFrom<__nv_bfloat16>(dst, rows, cols, x, y, num_sms, stream);
    case DType::kF16: return LaunchCastFrom<__half>(dst, rows, cols, x, y, num_sms, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashtick::cuda
