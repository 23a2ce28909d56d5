// CPU reference of kAdamW (kernels/ops/optimizer.h; Loshchilov & Hutter 2019, the
// update of torch.optim.AdamW), elementwise in the parameter dtype T in the order the
// contract fixes:
//   g = s·grad;  m = β1·m + (1 − β1)·g;  v = β2·v + (1 − β2)·g²
//   θ = θ·(1 − lr·λ);  θ = θ − lr·((m/bc1) / (√(v/bc2) + ε))
#include <cmath>

#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/common/optimizer_scalars.h"
#include "kernels/ops/optimizer.h"

namespace flashtick::cpu {

absl::Status AdamW(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  int64_t n = 0;
  bool unused = false;
  RETURN_IF_ERROR(CheckOptimizerArgs(desc, in, out, &n, &unused));
  return DispatchFloat(desc.dtype, "adamw", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    const OptimizerScalars<T> k(desc.optimizer);
    const T* grad = in[0].as<T>();
    T* theta = out[0].as<T>();
    T* m = out[1].as<T>();
    T* v = out[2].as<T>();
    ctx.pool->ParallelFor(n, 1 << 14, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const T g = k.grad_scale * grad[i];
        m[i] = k.b1 * m[i] + k.omb1 * g;
        v[i] = k.b2 * v[i] + k.omb2 * (g * g);
        theta[i] = theta[i] * k.decay;
        theta[i] = theta[i] - k.lr * ((m[i] / k.bc1) / (std::sqrt(v[i] / k.bc2) + k.eps));
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
