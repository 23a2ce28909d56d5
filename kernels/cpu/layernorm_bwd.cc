// CPU reference of kLayerNormBwd (kernels/ops/layernorm_bwd.h), llm.c style:
//   g = dY∘γ;  dX = r·(g − mean(g) − x̂·mean(g∘x̂));  dγ = Σ_rows dY∘x̂;  dβ = Σ_rows dY
// f64 throughout; dγ and dβ summed over fixed row blocks (deterministic).
#include "kernels/ops/layernorm_bwd.h"

#include "common/status_macros.h"
#include "kernels/cpu/block_sums.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/layernorm_row.h"

namespace flashtick::cpu {

absl::Status LayerNormBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  LayerNormBwdLayout l;
  RETURN_IF_ERROR(CheckLayerNormBwdArgs(desc, in, out, &l));
  return DispatchFloat(desc.dtype, "layernorm_bwd", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    const T* x = in[0].as<T>();
    const T* gamma = in[1].as<T>();
    const T* dy = in[2].as<T>();
    T* dx = out[0].as<T>();
    const int64_t C = l.C;
    const double eps = desc.layernorm.eps;
    BlockSums sums(l.M, kLayerNormRowBlock, C, 2);  // 0: dγ, 1: dβ
    sums.ForEachBlock(ctx.pool, [&](int64_t m0, int64_t m1, double* acc) {
      LayerNormRow row;
      std::vector<double> g(C);
      for (int64_t m = m0; m < m1; ++m) {
        const T* dyr = dy + m * l.dy.row_stride;
        row.Load(x + m * l.x.row_stride, C, eps);
        for (int64_t c = 0; c < C; ++c) {
          const double d = static_cast<double>(dyr[c]);
          g[c] = d * static_cast<double>(gamma[c]);
          acc[c] += d * row.xhat[c];  // dγ
          acc[C + c] += d;            // dβ
        }
        row.ApplyJ(g.data(), g.data());  // dX = J (dY∘γ)
        T* dxr = dx + m * l.dx.row_stride;
        for (int64_t c = 0; c < C; ++c) dxr[c] = static_cast<T>(g[c]);
      }
    });
    sums.Reduce(0, out[1].as<T>());
    sums.Reduce(1, out[2].as<T>());
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
