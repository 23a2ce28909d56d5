// CPU reference of kBiasGrad (kernels/ops/bias_grad.h): db[n] = Σ_m dY[m, n], in f64
// over fixed row blocks added in block order (deterministic for any thread count).
#include "kernels/ops/bias_grad.h"

#include "common/status_macros.h"
#include "kernels/cpu/block_sums.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"

namespace flashtick::cpu {

absl::Status BiasGrad(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RowLayout r;
  RETURN_IF_ERROR(CheckBiasGradArgs(desc, in, out, &r));
  return DispatchFloat(desc.dtype, "bias_grad", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    const T* dy = in[0].as<T>();
    BlockSums sums(r.rows, kBiasGradRowBlock, r.cols, 1);
    sums.ForEachBlock(ctx.pool, [&](int64_t m0, int64_t m1, double* acc) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* row = dy + m * r.row_stride;
        for (int64_t n = 0; n < r.cols; ++n) acc[n] += static_cast<double>(row[n]);
      }
    });
    sums.Reduce(0, out[0].as<T>());
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
