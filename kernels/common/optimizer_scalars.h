// Host scalars of the optimizer steps, computed in f64 and rounded once to the
// parameter dtype T, exactly as kernels/ops/optimizer.h specifies. Both backends use
// them, so the CPU and CUDA steps agree to the bit up to FMA contraction.
#pragma once

#include <cmath>

#include "kernels/ops/op_desc.h"

namespace flashtick {

template <typename T>
struct OptimizerScalars {
  T grad_scale, b1, omb1, b2, omb2, lr, eps, rho, decay, bc1, bc2;

  explicit OptimizerScalars(const OptimizerAttrs& a)
      : grad_scale(static_cast<T>(a.grad_scale)),
        b1(static_cast<T>(a.beta1)),
        omb1(T(1) - b1),
        b2(static_cast<T>(a.beta2)),
        omb2(T(1) - b2),
        lr(static_cast<T>(a.lr)),
        eps(static_cast<T>(a.eps)),
        rho(static_cast<T>(a.rho)),
        decay(
            static_cast<T>(1.0 - static_cast<double>(a.lr) * static_cast<double>(a.weight_decay))),
        bc1(static_cast<T>(1.0 -
                           std::pow(static_cast<double>(a.beta1), static_cast<double>(a.step)))),
        bc2(static_cast<T>(1.0 -
                           std::pow(static_cast<double>(a.beta2), static_cast<double>(a.step)))) {}
};

}  // namespace flashtick
