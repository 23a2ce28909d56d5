// Shared base for the parity cases of the non-attention ops (cases_matmul.cc,
// cases_elementwise.cc, cases_layernorm.cc, ...). Inputs are drawn uniformly and
// rounded to the bf16 grid, so every target (fp64 reference, fp32, fp16, bf16) sees
// exactly the same input values and the reported nmse measures the kernel alone (its
// fp32 arithmetic and the rounding of its outputs), not the rounding of its inputs.
// Values on the bf16 grid in the ranges used here are exact in fp16 and fp32 too.
#pragma once

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/half.h"
#include "tests/parity/parity.h"

namespace flashtick::parity {

// uniform [lo, hi), then nearest bf16 (integers for Role::kI32).
inline void FillOnBf16Grid(std::mt19937_64& rng, HostTensor& t) {
  std::uniform_real_distribution<double> u(t.spec.lo, t.spec.hi);
  for (auto& v : t.values) {
    const double x = u(rng);
    v = t.spec.role == Role::kI32 ? std::floor(x) : Bf16BitsToFloat(DoubleToBf16Bits(x));
  }
}

// A case built from plain data: name, vars, desc and tensor specs; inputs on the bf16
// grid unless `on_grid` is false.
class OpCase : public TestCase {
 public:
  OpCase(std::string name, std::string vars, OpDesc desc, std::vector<TensorSpec> in,
         std::vector<TensorSpec> out)
      : name_(std::move(name)), vars_(std::move(vars)), desc_(desc), in_(std::move(in)),
        out_(std::move(out)) {}

  std::string Name() const override { return name_; }
  std::string Vars() const override { return vars_; }
  OpDesc Desc() const override { return desc_; }
  std::vector<TensorSpec> Inputs() const override { return in_; }
  std::vector<TensorSpec> Outputs() const override { return out_; }
  void Fill(size_t index, std::mt19937_64& rng, HostTensor& t) const override {
    if (on_grid_) return FillOnBf16Grid(rng, t);
    TestCase::Fill(index, rng, t);
  }
  bool GpuOnly() const override { return gpu_only_; }

  OpCase& OffGrid() { on_grid_ = false; return *this; }
  OpCase& GpuOnlyShape() { gpu_only_ = true; return *this; }

 private:
  std::string name_, vars_;
  OpDesc desc_;
  std::vector<TensorSpec> in_, out_;
  bool on_grid_ = true;
  bool gpu_only_ = false;
};

// A TensorSpec with value range and flags set in one expression.
inline TensorSpec Spec(std::string name, std::vector<int64_t> shape, Role role = Role::kData,
                       double lo = -1.0, double hi = 1.0) {
  TensorSpec t(std::move(name), std::move(shape), role);
  t.lo = lo;
  t.hi = hi;
  return t;
}

inline TensorSpec Strided(TensorSpec t, std::vector<int64_t> strides) {
  t.strides = std::move(strides);
  return t;
}

inline TensorSpec Accumulate(TensorSpec t) {
  t.accumulate = true;
  return t;
}

inline OpDesc DescOf(Op op) {
  OpDesc d;
  d.op = op;
  return d;
}

}  // namespace flashtick::parity
