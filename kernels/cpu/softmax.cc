// CPU row softmax (kernels/ops/softmax.h) in f64, threaded over rows:
//   y_n = exp(x_n − max) / Σ_k exp(x_k − max)
// The row is read fully (max, then the sum) before Y is written, so Y may be X.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/softmax.h"

namespace flashtick::cpu {

absl::Status Softmax(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RowLayout rx, ry;
  RETURN_IF_ERROR(CheckUnaryRowArgs("softmax", desc, in, out, &rx, &ry));
  return DispatchFloat(desc.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    const int64_t N = rx.cols;
    ctx.pool->ParallelFor(rx.rows, RowGrain(N, 1 << 12), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* xr = x + m * rx.row_stride;
        T* yr = y + m * ry.row_stride;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t n = 0; n < N; ++n) mx = std::max(mx, static_cast<double>(xr[n]));
        // NaN inputs make max ignore them; the sum below then turns the row NaN, as it should.
        double sum = 0.0;
        for (int64_t n = 0; n < N; ++n) sum += std::exp(static_cast<double>(xr[n]) - mx);
        const double inv = 1.0 / sum;
        for (int64_t n = 0; n < N; ++n)
          yr[n] = static_cast<T>(std::exp(static_cast<double>(xr[n]) - mx) * inv);
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
