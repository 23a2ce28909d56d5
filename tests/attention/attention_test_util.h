// Helpers for the CPU attention tests: seeded random tensors, a fused [B, T, 3, H, D]
// buffer whose Q/K/V slices have non-trivial strides, and runners that call the CPU
// backend with f32 or f64 views and return fp64 results.
#pragma once

#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/backend.h"
#include "kernels/ops/attention.h"

namespace flashtick::testing_util {

struct AttnCase {
  int64_t B, T, H, Hkv, D;
  bool causal;
  AttentionShape shape() const { return {B, T, H, Hkv, D}; }
  int64_t nq() const { return B * T * H * D; }
  int64_t nk() const { return B * T * Hkv * D; }
  int64_t nstat() const { return B * H * T; }
};

inline std::vector<double> Random(int64_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> x(n);
  for (auto& e : x) e = u(rng);
  return x;
}

inline double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

template <typename T>
constexpr DType DTypeOf() {
  return std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
}

// Q, K, V packed in one fused [B, T, 3·H, D] buffer (K and V use the first Hkv of their
// H slots; the rest is filler), so each view has a T stride of 3·H·D.
template <typename T>
class FusedQkv {
 public:
  FusedQkv(const AttnCase& c, const std::vector<double>& q, const std::vector<double>& k,
           const std::vector<double>& v)
      : c_(c), buf_(c.B * c.T * 3 * c.H * c.D, T(99)) {
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t t = 0; t < c.T; ++t)
        for (int64_t d = 0; d < c.D; ++d) {
          for (int64_t h = 0; h < c.H; ++h) At(0, b, t, h, d) = T(q[((b * c.T + t) * c.H + h) * c.D + d]);
          for (int64_t h = 0; h < c.Hkv; ++h) {
            At(1, b, t, h, d) = T(k[((b * c.T + t) * c.Hkv + h) * c.D + d]);
            At(2, b, t, h, d) = T(v[((b * c.T + t) * c.Hkv + h) * c.D + d]);
          }
        }
  }
  TensorView View(int which) {
    TensorView v;
    v.data = buf_.data() + which * c_.H * c_.D;
    v.dtype = DTypeOf<T>();
    v.rank = 4;
    v.shape = {c_.B, c_.T, which == 0 ? c_.H : c_.Hkv, c_.D, 0};
    v.strides = {c_.T * 3 * c_.H * c_.D, 3 * c_.H * c_.D, c_.D, 1, 0};
    return v;
  }

 private:
  T& At(int which, int64_t b, int64_t t, int64_t h, int64_t d) {
    return buf_[(((b * c_.T + t) * 3 + which) * c_.H + h) * c_.D + d];
  }
  AttnCase c_;
  std::vector<T> buf_;
};

// A host tensor of T converted from / to fp64.
template <typename T>
struct HostT {
  std::vector<T> data;
  TensorView view;
  HostT(const std::vector<double>& x, std::initializer_list<int64_t> shape)
      : data(x.begin(), x.end()) {
    view = MakeView(data.data(), DTypeOf<T>(), DeviceKind::kCpu, shape);
  }
  std::vector<double> F64() const { return std::vector<double>(data.begin(), data.end()); }
};

inline OpDesc AttnDesc(Op op, DType dt, bool causal) {
  OpDesc d;
  d.op = op;
  d.dtype = dt;
  d.attention.causal = causal;
  return d;
}

}  // namespace flashtick::testing_util
