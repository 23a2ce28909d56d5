// One LayerNorm row in f64 for the CPU backward ops: recomputes μ, r = 1/√(σ² + eps)
// and x̂ = (x − μ)·r from X (two-pass variance, as the forward), and applies the
// symmetric Jacobian J = ∂x̂/∂x = r·(I − 11ᵀ/C − x̂x̂ᵀ/C) to a vector
// (kernels/ops/layernorm_bwd.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace flashtick::cpu {

struct LayerNormRow {
  int64_t C = 0;
  double r = 0.0;
  std::vector<double> xhat;

  template <typename T>
  void Load(const T* x, int64_t cols, double eps) {
    C = cols;
    xhat.resize(C);
    double mean = 0.0;
    for (int64_t c = 0; c < C; ++c) mean += static_cast<double>(x[c]);
    mean /= static_cast<double>(C);
    double var = 0.0;
    for (int64_t c = 0; c < C; ++c) {
      const double d = static_cast<double>(x[c]) - mean;
      var += d * d;
    }
    var /= static_cast<double>(C);
    r = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < C; ++c) xhat[c] = (static_cast<double>(x[c]) - mean) * r;
  }

  // mean(a) and mean(a∘x̂).
  void Means(const double* a, double* mean_a, double* mean_ax) const {
    double s = 0.0, sx = 0.0;
    for (int64_t c = 0; c < C; ++c) {
      s += a[c];
      sx += a[c] * xhat[c];
    }
    *mean_a = s / static_cast<double>(C);
    *mean_ax = sx / static_cast<double>(C);
  }

  // out = J a = r·(a − mean(a) − x̂·mean(a∘x̂)); out may alias a.
  void ApplyJ(const double* a, double* out) const {
    double ma, max;
    Means(a, &ma, &max);
    for (int64_t c = 0; c < C; ++c) out[c] = r * (a[c] - ma - xhat[c] * max);
  }
};

}  // namespace flashtick::cpu
