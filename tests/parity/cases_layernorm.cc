// Parity cases for LayerNorm forward, backward and backward-over-backward
// (kernels/ops/layernorm.h, layernorm_bwd.h). Shapes: the model's widths (64, 384,
// 768), an odd width (35, scalar path), row-strided X/dY (NaN in the gaps), a row
// mean far from zero (|μ| ≫ σ, where a one-pass variance would cancel), and 8,000
// rows so the dγ/dβ/∂γ column sums run in several splits.
#include <memory>

#include "absl/strings/str_cat.h"
#include "tests/parity/ops_case.h"

namespace flashtick::parity {
namespace {

struct LnShape {
  int64_t M, C;
  int64_t pad = 0;         // row padding of X and dY
  double x_lo = -2, x_hi = 2;
};

const LnShape kShapes[] = {
    {200, 64}, {96, 384}, {64, 768}, {77, 35}, {50, 64, 8}, {40, 96, 0, 10.0, 12.0}, {8000, 64},
};

std::string Vars(const LnShape& s) {
  std::string v = absl::StrCat("M=", s.M, ",C=", s.C);
  if (s.pad) absl::StrAppend(&v, ",pad=", s.pad);
  if (s.x_lo != -2) absl::StrAppend(&v, ",x=[", s.x_lo, ",", s.x_hi, ")");
  return v;
}

TensorSpec Row(const LnShape& s, const char* name, bool strided, double lo = -1, double hi = 1) {
  TensorSpec t = Spec(name, {s.M, s.C}, Role::kData, lo, hi);
  if (strided && s.pad) t.strides = {s.C + s.pad, 1};
  return t;
}

OpDesc Desc(Op op) {
  OpDesc d = DescOf(op);
  d.layernorm.eps = 1e-5f;
  return d;
}

}  // namespace

FT_PARITY_CASES(layernorm) {
  CaseList v;
  for (const LnShape& s : kShapes) {
    const TensorSpec x = Row(s, "X", true, s.x_lo, s.x_hi);
    // γ around 1 (as trained), β around 0.
    const TensorSpec gamma = Spec("gamma", {s.C}, Role::kF32, 0.5, 1.5);
    const TensorSpec beta = Spec("beta", {s.C}, Role::kF32, -0.5, 0.5);
    const TensorSpec param = Spec("p", {s.C}, Role::kF32);
    auto named = [](TensorSpec t, const char* n) { t.name = n; return t; };
    v.push_back(std::make_unique<OpCase>(
        "layernorm", Vars(s), Desc(Op::kLayerNorm), std::vector<TensorSpec>{x, gamma, beta},
        std::vector<TensorSpec>{Row(s, "Y", false), Spec("mean", {s.M}, Role::kF32),
                                Spec("rstd", {s.M}, Role::kF32)}));
    v.push_back(std::make_unique<OpCase>(
        "layernorm_bwd", Vars(s), Desc(Op::kLayerNormBwd),
        std::vector<TensorSpec>{x, gamma, Row(s, "dY", true)},
        std::vector<TensorSpec>{Row(s, "dX", false), named(param, "dgamma"),
                                named(param, "dbeta")}));
    v.push_back(std::make_unique<OpCase>(
        "layernorm_bwd_bwd", Vars(s), Desc(Op::kLayerNormBwdBwd),
        std::vector<TensorSpec>{x, gamma, Row(s, "dY", true), Row(s, "gX", false),
                                named(param, "g_gamma"), named(param, "g_beta")},
        std::vector<TensorSpec>{Row(s, "dX2", true), named(param, "dgamma2"),
                                Row(s, "ddY", false)}));
  }
  return v;
}

}  // namespace flashtick::parity
