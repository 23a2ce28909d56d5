// CPU reference of kLayerNormBwdBwd (kernels/ops/layernorm_bwd.h;
// docs/derivations/layernorm_bwd_bwd.md). Per row, g = dY∘γ, dX = J g, ã = J gX:
//   ∂dY = γ∘ã + gγ∘x̂ + gβ
//   ∂γ  = Σ_rows dY∘ã
//   ∂X  = r²·x̂·(gx·ax − ga + m_g·m_a) − r·(ax·dX + gx·ã) + J(gγ∘dY)
// with m_g = mean(g), m_a = mean(gX), gx = mean(g∘x̂), ax = mean(gX∘x̂), ga = mean(g∘gX).
// f64 throughout; ∂γ summed over fixed row blocks (deterministic).
#include "common/status_macros.h"
#include "kernels/cpu/block_sums.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/layernorm_row.h"
#include "kernels/ops/layernorm_bwd.h"

namespace flashtick::cpu {

absl::Status LayerNormBwdBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  LayerNormBwdLayout l;
  RETURN_IF_ERROR(CheckLayerNormBwdBwdArgs(desc, in, out, &l));
  return DispatchFloat(desc.dtype, "layernorm_bwd_bwd", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    const T* x = in[0].as<T>();
    const T* gamma = in[1].as<T>();
    const T* dy = in[2].as<T>();
    const T* gx_in = in[3].as<T>();
    const T* g_gamma = in[4].as<T>();
    const T* g_beta = in[5].as<T>();
    T* d_x = out[0].as<T>();
    T* d_dy = out[2].as<T>();
    const int64_t C = l.C;
    const double eps = desc.layernorm.eps;
    const double inv_c = 1.0 / static_cast<double>(C);
    BlockSums sums(l.M, kLayerNormRowBlock, C, 1);  // ∂γ
    sums.ForEachBlock(ctx.pool, [&](int64_t m0, int64_t m1, double* acc) {
      LayerNormRow row;
      std::vector<double> g(C), ga_vec(C), dx(C), at(C), bd(C);
      for (int64_t m = m0; m < m1; ++m) {
        const T* dyr = dy + m * l.dy.row_stride;
        const T* gxr = gx_in + m * l.gx.row_stride;
        row.Load(x + m * l.x.row_stride, C, eps);
        const double r = row.r;
        double ga = 0.0;
        for (int64_t c = 0; c < C; ++c) {
          g[c] = static_cast<double>(dyr[c]) * static_cast<double>(gamma[c]);
          ga_vec[c] = static_cast<double>(gxr[c]);
          bd[c] = static_cast<double>(g_gamma[c]) * static_cast<double>(dyr[c]);
          ga += g[c] * ga_vec[c];
        }
        ga *= inv_c;
        double m_g, gx, m_a, ax;
        row.Means(g.data(), &m_g, &gx);
        row.Means(ga_vec.data(), &m_a, &ax);
        for (int64_t c = 0; c < C; ++c) {
          dx[c] = r * (g[c] - m_g - row.xhat[c] * gx);       // J g
          at[c] = r * (ga_vec[c] - m_a - row.xhat[c] * ax);  // ã = J gX
        }
        row.ApplyJ(bd.data(), bd.data());  // J(gγ∘dY)
        const double k = r * r * (gx * ax - ga + m_g * m_a);
        T* dxo = d_x + m * l.dx2.row_stride;
        T* ddyo = d_dy + m * l.ddy.row_stride;
        for (int64_t c = 0; c < C; ++c) {
          dxo[c] = static_cast<T>(k * row.xhat[c] - r * (ax * dx[c] + gx * at[c]) + bd[c]);
          ddyo[c] = static_cast<T>(static_cast<double>(gamma[c]) * at[c] +
                                   static_cast<double>(g_gamma[c]) * row.xhat[c] +
                                   static_cast<double>(g_beta[c]));
          acc[c] += static_cast<double>(dyr[c]) * at[c];
        }
      }
    });
    sums.Reduce(0, out[1].as<T>());
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
