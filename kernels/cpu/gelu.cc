// CPU GELU, tanh approximation (kernels/ops/gelu.h), in f64, threaded over rows:
//   y = ½·x·(1 + tanh(k0·(x + k1·x³)))
#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/gelu.h"
#include "kernels/ops/gelu_bwd.h"  // GeluTanh: one definition for every CPU GELU

namespace flashtick::cpu {

absl::Status Gelu(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RowLayout rx, ry;
  RETURN_IF_ERROR(CheckUnaryRowArgs("gelu", desc, in, out, &rx, &ry));
  return DispatchFloat(desc.dtype, "gelu", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    ctx.pool->ParallelFor(rx.rows, RowGrain(rx.cols, 1 << 12), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* xr = x + m * rx.row_stride;
        T* yr = y + m * ry.row_stride;
        for (int64_t c = 0; c < rx.cols; ++c) yr[c] = static_cast<T>(GeluTanh(static_cast<double>(xr[c])));
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
