// CPU AddBias: Y[m, n] = X[m, n] + b[n] (kernels/ops/elementwise.h), threaded over rows.
// In place when Y is X: each element is read before it is written.
#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/elementwise.h"

namespace flashtick::cpu {

absl::Status AddBias(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RowLayout rows[2];
  RETURN_IF_ERROR(CheckAddBiasArgs(desc, in, out, rows));
  return DispatchFloat(desc.dtype, "add_bias", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in[0].as<T>();
    const T* b = in[1].as<T>();  // ParamDType(f32/f64) is the same dtype on the CPU
    T* y = out[0].as<T>();
    const RowLayout &rx = rows[0], &ry = rows[1];
    ctx.pool->ParallelFor(rx.rows, RowGrain(rx.cols), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* xr = x + m * rx.row_stride;
        T* yr = y + m * ry.row_stride;
        for (int64_t n = 0; n < rx.cols; ++n) yr[n] = xr[n] + b[n];
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
