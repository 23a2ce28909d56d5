// Parity cases for the optimizer steps on fp32 master weights (kernels/ops/optimizer.h):
// AdamW at step 1 and step 10 (bias correction), Sophia-H with a Hessian estimate and
// with negative and tiny h (the max(ρ·h, ε) floor and the clip both bite). Tensors are
// read-modify-write, so param, m and v/h start from generated values. A large lr makes
// the update visible in the param's nmse. Element counts that are not a multiple of 4
// exercise the vector kernel's scalar tail. Half-precision runs SKIP (fp32 only).
#include <memory>

#include "absl/strings/str_cat.h"
#include "tests/parity/ops_case.h"

namespace flashtick::parity {
namespace {

OpDesc Desc(Op op, int64_t step) {
  OpDesc d = DescOf(op);
  OptimizerAttrs& a = d.optimizer;
  a.lr = 0.1f;
  a.beta1 = 0.9f;
  a.beta2 = op == Op::kAdamW ? 0.999f : 0.99f;
  a.eps = op == Op::kAdamW ? 1e-8f : 1e-4f;
  a.weight_decay = 0.1f;
  a.rho = 0.04f;
  a.step = step;
  a.grad_scale = 0.5f;
  return d;
}

}  // namespace

FT_PARITY_CASES(optimizer) {
  CaseList v;
  const std::vector<std::vector<int64_t>> shapes = {{1003}, {64, 96}};
  for (const auto& shape : shapes) {
    const std::string dims = shape.size() == 1 ? absl::StrCat("n=", shape[0])
                                               : absl::StrCat("n=", shape[0], "x", shape[1]);
    const TensorSpec grad = Spec("grad", shape);
    const TensorSpec param = Accumulate(Spec("param", shape));
    const TensorSpec m = Accumulate(Spec("m", shape, Role::kData, -0.1, 0.1));
    const TensorSpec var = Accumulate(Spec("v", shape, Role::kData, 0.0, 0.01));  // v ≥ 0
    for (int64_t step : {1, 10})
      v.push_back(std::make_unique<OpCase>("adamw", absl::StrCat(dims, ",step=", step),
                                           Desc(Op::kAdamW, step), std::vector<TensorSpec>{grad},
                                           std::vector<TensorSpec>{param, m, var}));
    // h over [−0.5, 1): negative and tiny estimates hit the ε floor and the clip.
    const TensorSpec h = Accumulate(Spec("h", shape, Role::kData, -0.5, 1.0));
    const TensorSpec hhat = Spec("hhat", shape, Role::kData, -0.5, 1.0);
    v.push_back(std::make_unique<OpCase>("sophia_h", dims, Desc(Op::kSophiaH, 1),
                                         std::vector<TensorSpec>{grad, hhat},
                                         std::vector<TensorSpec>{param, m, h}));
  }
  return v;
}

}  // namespace flashtick::parity
