// CPU reference of kSophiaH (kernels/ops/optimizer.h; Liu et al. 2023, Algorithm 3
// with Hutchinson's estimate ĥ = u∘(∇²L·u)), elementwise in the parameter dtype T:
//   g = s·grad;  m = β1·m + (1 − β1)·g;  h = β2·h + (1 − β2)·ĥ   (only when ĥ is given)
//   θ = θ·(1 − lr·λ);  θ = θ − lr·clamp(m / max(ρ·h, ε), −1, 1)
// max(ρ·h, ε) keeps the step finite where the estimate is negative or tiny: there the
// ratio saturates and the step is lr·sign(m).
#include <algorithm>

#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/common/optimizer_scalars.h"
#include "kernels/ops/optimizer.h"

namespace flashtick::cpu {

absl::Status SophiaH(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  int64_t n = 0;
  bool has_hhat = false;
  RETURN_IF_ERROR(CheckOptimizerArgs(desc, in, out, &n, &has_hhat));
  return DispatchFloat(desc.dtype, "sophia_h", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    const OptimizerScalars<T> k(desc.optimizer);
    const T* grad = in[0].as<T>();
    const T* hhat = has_hhat ? in[1].as<T>() : nullptr;
    T* theta = out[0].as<T>();
    T* m = out[1].as<T>();
    T* h = out[2].as<T>();
    ctx.pool->ParallelFor(n, 1 << 14, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const T g = k.grad_scale * grad[i];
        m[i] = k.b1 * m[i] + k.omb1 * g;
        if (hhat != nullptr) h[i] = k.b2 * h[i] + k.omb2 * hhat[i];
        theta[i] = theta[i] * k.decay;
        const T ratio = m[i] / std::max(k.rho * h[i], k.eps);
        theta[i] = theta[i] - k.lr * std::clamp(ratio, T(-1), T(1));
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
