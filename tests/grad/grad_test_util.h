// Helpers for the training-op gradient tests (tests/grad): seeded f64 buffers, views,
// one-call op runs on the CPU backend, element-wise central finite differences and a
// normalised max error. Every test seeds its RNG, so a failure reproduces
// with the same inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/tensor.h"

namespace flashtick::grad_test {

inline std::unique_ptr<Backend> Cpu(int threads = 2) {
  BackendOptions o;
  o.threads = threads;
  return std::make_unique<cpu::CpuBackend>(o);
}

inline std::vector<double> Randn(size_t n, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

template <typename T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<float>() {
  return DType::kF32;
}
template <>
constexpr DType DTypeOf<double>() {
  return DType::kF64;
}
template <>
constexpr DType DTypeOf<int32_t>() {
  return DType::kI32;
}

template <typename T>
TensorView V(std::vector<T>& v, std::initializer_list<int64_t> shape) {
  return MakeView(v.data(), DTypeOf<T>(), DeviceKind::kCpu, shape);
}

template <typename T>
std::vector<T> Cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

inline OpDesc Desc(Op op, DType dtype = DType::kF64) {
  OpDesc d;
  d.op = op;
  d.dtype = dtype;
  return d;
}

inline absl::Status RunOp(Backend& be, const OpDesc& d, std::initializer_list<TensorView> in,
                          std::initializer_list<TensorView> out) {
  std::vector<TensorView> i(in), o(out);
  return be.Run(d, i, o);
}

inline double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// max|got − want| / max|want| (absolute when want is all zero).
template <typename A, typename B>
double MaxRelErr(const std::vector<A>& got, const std::vector<B>& want) {
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  return scale > 0.0 ? err / scale : err;
}

// ∂f/∂x_i by central differences (f reads *x), h relative to max(1, |x_i|).
inline std::vector<double> NumericGrad(std::vector<double>* x, const std::function<double()>& f,
                                       double h = 1e-6) {
  std::vector<double> g(x->size());
  for (size_t i = 0; i < x->size(); ++i) {
    const double x0 = (*x)[i];
    const double step = h * std::max(1.0, std::fabs(x0));
    (*x)[i] = x0 + step;
    const double fp = f();
    (*x)[i] = x0 - step;
    const double fm = f();
    (*x)[i] = x0;
    g[i] = (fp - fm) / (2.0 * step);
  }
  return g;
}

}  // namespace flashtick::grad_test
