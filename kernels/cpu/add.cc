// CPU Add: Z = X + Y elementwise (kernels/ops/elementwise.h), threaded over rows.
// Z may be X or Y itself (in place).
#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/elementwise.h"

namespace flashtick::cpu {

absl::Status Add(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RowLayout rows[3];
  RETURN_IF_ERROR(CheckAddArgs(desc, in, out, rows));
  return DispatchFloat(desc.dtype, "add", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in[0].as<T>();
    const T* y = in[1].as<T>();
    T* z = out[0].as<T>();
    const RowLayout &rx = rows[0], &ry = rows[1], &rz = rows[2];
    ctx.pool->ParallelFor(rx.rows, RowGrain(rx.cols), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* xr = x + m * rx.row_stride;
        const T* yr = y + m * ry.row_stride;
        T* zr = z + m * rz.row_stride;
        for (int64_t n = 0; n < rx.cols; ++n) zr[n] = xr[n] + yr[n];
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
