// Helpers for the CPU op tests: a CPU backend with a chosen thread count, seeded
// random buffers, views, and a one-call Run. Every test seeds its RNG, so a failure
// reproduces with the same inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/tensor.h"

namespace flashtick::testing {

inline std::unique_ptr<cpu::CpuBackend> MakeCpu(int threads = 2) {
  BackendOptions o;
  o.threads = threads;
  return std::make_unique<cpu::CpuBackend>(o);
}

template <typename T>
std::vector<T> RandomVec(size_t n, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<float>() { return DType::kF32; }
template <> constexpr DType DTypeOf<double>() { return DType::kF64; }

template <typename T>
TensorView View(std::vector<T>& v, std::initializer_list<int64_t> shape) {
  return MakeView(v.data(), DTypeOf<T>(), DeviceKind::kCpu, shape);
}

// A rank-2 [rows, cols] view with a row stride (elements) into v.
template <typename T>
TensorView Strided2D(std::vector<T>& v, int64_t rows, int64_t cols, int64_t row_stride,
                     int64_t offset = 0) {
  TensorView t = MakeView(v.data() + offset, DTypeOf<T>(), DeviceKind::kCpu, {rows, cols});
  t.strides[0] = row_stride;
  return t;
}

inline absl::Status RunOp(Backend& be, const OpDesc& d, std::initializer_list<TensorView> in,
                        std::initializer_list<TensorView> out) {
  std::vector<TensorView> i(in), o(out);
  return be.Run(d, i, o);
}

inline OpDesc Desc(Op op, DType dtype) {
  OpDesc d;
  d.op = op;
  d.dtype = dtype;
  return d;
}

// Relative error |a − b| / max(1, |b|), the bound the tests use for values of order one.
inline double RelErr(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

}  // namespace flashtick::testing
