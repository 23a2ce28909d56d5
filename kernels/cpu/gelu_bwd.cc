// CPU reference of kGeluBwd and kGeluBwdBwd (kernels/ops/gelu_bwd.h), tanh GELU:
//   u = k0·(x + k1·x³), t = tanh(u), s = 1 − t², u' = k0·(1 + 3k1·x²), u'' = 6k0k1·x
//   y'  = ½(1 + t) + ½·x·s·u'                    dX  = dY∘y'
//   y'' = s·u' + ½·x·s·(u'' − 2·t·u'²)          ∂X  = gdX∘dY∘y'',  ∂dY = gdX∘y'
// Elementwise in f64, rows in parallel.
#include "kernels/ops/gelu_bwd.h"

#include <cmath>

#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"

namespace flashtick::cpu {
namespace {

struct GeluDerivs {
  double d1, d2;  // y'(x), y''(x)
};

GeluDerivs Derivs(double x) {
  const double u = kGeluK0 * (x + kGeluK1 * x * x * x);
  const double t = std::tanh(u);
  const double s = 1.0 - t * t;  // sech²(u)
  const double du = kGeluK0 * (1.0 + 3.0 * kGeluK1 * x * x);
  const double ddu = 6.0 * kGeluK0 * kGeluK1 * x;
  return {0.5 * (1.0 + t) + 0.5 * x * s * du, s * du + 0.5 * x * s * (ddu - 2.0 * t * du * du)};
}

}  // namespace

absl::Status GeluBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  GeluBwdLayout l;
  RETURN_IF_ERROR(CheckGeluBwdArgs(desc, in, out, &l));
  return DispatchFloat(desc.dtype, "gelu_bwd", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    ctx.pool->ParallelFor(l.M, RowGrain(l.C), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* x = in[0].as<T>() + m * l.rows[0].row_stride;
        const T* dy = in[1].as<T>() + m * l.rows[1].row_stride;
        T* dx = out[0].as<T>() + m * l.rows[2].row_stride;
        for (int64_t c = 0; c < l.C; ++c)  // dx may be dy (in place): read before write
          dx[c] = static_cast<T>(static_cast<double>(dy[c]) * Derivs(x[c]).d1);
      }
    });
    return absl::OkStatus();
  });
}

absl::Status GeluBwdBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  GeluBwdLayout l;
  RETURN_IF_ERROR(CheckGeluBwdBwdArgs(desc, in, out, &l));
  return DispatchFloat(desc.dtype, "gelu_bwd_bwd", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    ctx.pool->ParallelFor(l.M, RowGrain(l.C), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* x = in[0].as<T>() + m * l.rows[0].row_stride;
        const T* dy = in[1].as<T>() + m * l.rows[1].row_stride;
        const T* gdx = in[2].as<T>() + m * l.rows[2].row_stride;
        T* d_x = out[0].as<T>() + m * l.rows[3].row_stride;
        T* d_dy = out[1].as<T>() + m * l.rows[4].row_stride;
        for (int64_t c = 0; c < l.C; ++c) {
          const GeluDerivs d = Derivs(x[c]);
          const double g = static_cast<double>(gdx[c]);
          d_x[c] = static_cast<T>(g * static_cast<double>(dy[c]) * d.d2);
          d_dy[c] = static_cast<T>(g * d.d1);
        }
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
