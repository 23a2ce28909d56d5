// CPU LayerNorm forward (kernels/ops/layernorm.h): per row, two-pass mean and biased
// variance in f64 (the one-pass E[x²] − μ² form cancels catastrophically when |μ| ≫ σ),
// then y = γ∘(x − μ)·r + β. Threaded over rows; each row is read fully before Y is
// written, so Y may be X.
#include <cmath>

#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/layernorm.h"

namespace flashtick::cpu {

absl::Status LayerNorm(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RowLayout rx, ry;
  RETURN_IF_ERROR(CheckLayerNormArgs(desc, in, out, &rx, &ry));
  return DispatchFloat(desc.dtype, "layernorm", [&](auto tag) {
    using T = decltype(tag);  // ParamDType(T) = T on the CPU
    const T* x = in[0].as<T>();
    const T* gamma = in[1].as<T>();
    const T* beta = in[2].as<T>();
    T* y = out[0].as<T>();
    T* mean_out = out[1].as<T>();
    T* rstd_out = out[2].as<T>();
    const int64_t C = rx.cols;
    const double eps = desc.layernorm.eps;
    ctx.pool->ParallelFor(rx.rows, RowGrain(C), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* xr = x + m * rx.row_stride;
        T* yr = y + m * ry.row_stride;
        double mean = 0.0;
        for (int64_t c = 0; c < C; ++c) mean += static_cast<double>(xr[c]);
        mean /= static_cast<double>(C);
        double var = 0.0;
        for (int64_t c = 0; c < C; ++c) {
          const double d = static_cast<double>(xr[c]) - mean;
          var += d * d;
        }
        var /= static_cast<double>(C);
        const double r = 1.0 / std::sqrt(var + eps);
        for (int64_t c = 0; c < C; ++c) {
          const double xhat = (static_cast<double>(xr[c]) - mean) * r;
          yr[c] = static_cast<T>(static_cast<double>(gamma[c]) * xhat + static_cast<double>(beta[c]));
        }
        mean_out[m] = static_cast<T>(mean);
        rstd_out[m] = static_cast<T>(r);
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
