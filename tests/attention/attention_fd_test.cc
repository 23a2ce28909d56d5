// Layer (a) of gradient correctness (STYLE rule 5): the CPU attention backward against
// central finite differences of the CPU forward in fp64. With loss = Σ dO∘O(Q, K, V),
//   (loss(x + εu) − loss(x − εu)) / 2ε = ⟨dQ, u_Q⟩ + ⟨dK, u_K⟩ + ⟨dV, u_V⟩ + O(ε²)
// for random directions u, and entry by entry for a sample of Q, K, V elements.
// Covers causal and not, GQA (dK, dV summed over the group), T = 1 and a ragged T.
#include "gtest/gtest.h"
#include "kernels/cpu/attention_naive.h"
#include "tests/attention/attention_test_util.h"

namespace flashtick {
namespace {

using testing_util::AttnCase;
using testing_util::HostT;

class AttentionFdTest : public testing::TestWithParam<AttnCase> {
 protected:
  void SetUp() override {
    auto b = CreateBackend("cpu", {.threads = 2});
    ASSERT_TRUE(b.ok()) << b.status();
    cpu_ = std::move(*b);
  }

  // loss = Σ dO∘O, O from the CPU backend's tiled forward.
  double Loss(const AttnCase& c, const std::vector<double>& q, const std::vector<double>& k,
              const std::vector<double>& v, const std::vector<double>& dout) {
    HostT<double> qt(q, {c.B, c.T, c.H, c.D}), kt(k, {c.B, c.T, c.Hkv, c.D}),
        vt(v, {c.B, c.T, c.Hkv, c.D});
    HostT<double> o(std::vector<double>(c.nq()), {c.B, c.T, c.H, c.D});
    HostT<double> l(std::vector<double>(c.nstat()), {c.B, c.H, c.T});
    const TensorView in[] = {qt.view, kt.view, vt.view};
    const TensorView out[] = {o.view, l.view};
    EXPECT_TRUE(cpu_->Run(testing_util::AttnDesc(Op::kAttentionFwd, DType::kF64, c.causal), in, out).ok());
    double loss = 0;
    for (int64_t i = 0; i < c.nq(); ++i) loss += dout[i] * o.data[i];
    return loss;
  }

  std::unique_ptr<Backend> cpu_;
};

TEST_P(AttentionFdTest, BackwardMatchesFiniteDifferences) {
  const AttnCase c = GetParam();
  auto q = testing_util::Random(c.nq(), 11), k = testing_util::Random(c.nk(), 12),
       v = testing_util::Random(c.nk(), 13), dout = testing_util::Random(c.nq(), 14);
  // O and L by the naive forward, so the backward under test sees independent inputs.
  std::vector<double> o(c.nq()), l(c.nstat());
  cpu::NaiveAttentionOptions opt;
  opt.causal = c.causal;
  cpu::NaiveAttentionFwd(c.shape(), opt, q.data(), k.data(), v.data(), o.data(), l.data());
  HostT<double> qt(q, {c.B, c.T, c.H, c.D}), kt(k, {c.B, c.T, c.Hkv, c.D}),
      vt(v, {c.B, c.T, c.Hkv, c.D}), ot(o, {c.B, c.T, c.H, c.D}), dot(dout, {c.B, c.T, c.H, c.D}),
      lt(l, {c.B, c.H, c.T});
  HostT<double> dq(std::vector<double>(c.nq()), {c.B, c.T, c.H, c.D});
  HostT<double> dk(std::vector<double>(c.nk()), {c.B, c.T, c.Hkv, c.D});
  HostT<double> dv(std::vector<double>(c.nk()), {c.B, c.T, c.Hkv, c.D});
  HostT<double> dvec(std::vector<double>(c.nstat()), {c.B, c.H, c.T});
  const TensorView in[] = {qt.view, kt.view, vt.view, ot.view, dot.view, lt.view};
  const TensorView out[] = {dq.view, dk.view, dv.view, dvec.view};
  ASSERT_TRUE(cpu_->Run(testing_util::AttnDesc(Op::kAttentionBwd, DType::kF64, c.causal), in, out).ok());

  constexpr double kEps = 1e-5;   // central differences: truncation O(ε²) ≈ 1e-10
  constexpr double kTol = 1e-7;   // well above truncation and cancellation (≈1e-16/ε)
  // Directional derivatives along random directions.
  for (uint32_t trial = 0; trial < 3; ++trial) {
    auto uq = testing_util::Random(c.nq(), 100 + trial), uk = testing_util::Random(c.nk(), 200 + trial),
         uv = testing_util::Random(c.nk(), 300 + trial);
    auto shift = [&](double sign) {
      auto q2 = q, k2 = k, v2 = v;
      for (int64_t i = 0; i < c.nq(); ++i) q2[i] += sign * kEps * uq[i];
      for (int64_t i = 0; i < c.nk(); ++i) k2[i] += sign * kEps * uk[i], v2[i] += sign * kEps * uv[i];
      return Loss(c, q2, k2, v2, dout);
    };
    const double fd = (shift(1) - shift(-1)) / (2 * kEps);
    double analytic = 0;
    for (int64_t i = 0; i < c.nq(); ++i) analytic += dq.data[i] * uq[i];
    for (int64_t i = 0; i < c.nk(); ++i) analytic += dk.data[i] * uk[i] + dv.data[i] * uv[i];
    EXPECT_NEAR(fd, analytic, kTol * std::max(1.0, std::fabs(fd))) << "trial " << trial;
  }
  // Entry by entry, a sample of each input.
  for (int which = 0; which < 3; ++which) {
    std::vector<double>* x = which == 0 ? &q : which == 1 ? &k : &v;
    const std::vector<double>& g = which == 0 ? dq.data : which == 1 ? dk.data : dv.data;
    const int64_t n = static_cast<int64_t>(x->size());
    for (int64_t idx = 0; idx < n; idx += std::max<int64_t>(1, n / 7)) {
      const double saved = (*x)[idx];
      (*x)[idx] = saved + kEps;
      const double up = Loss(c, q, k, v, dout);
      (*x)[idx] = saved - kEps;
      const double down = Loss(c, q, k, v, dout);
      (*x)[idx] = saved;
      EXPECT_NEAR((up - down) / (2 * kEps), g[idx], kTol) << "input " << which << " entry " << idx;
    }
  }
  // Dvec = rowsum(dO∘O).
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t i = 0; i < c.T; ++i) {
        double d = 0;
        for (int64_t e = 0; e < c.D; ++e) {
          const int64_t at = ((b * c.T + i) * c.H + h) * c.D + e;
          d += dout[at] * o[at];
        }
        EXPECT_NEAR(dvec.data[(b * c.H + h) * c.T + i], d, 1e-13);
      }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionFdTest,
                         testing::Values(AttnCase{1, 1, 1, 1, 8, true}, AttnCase{1, 13, 2, 1, 8, true},
                                         AttnCase{1, 13, 2, 1, 8, false},
                                         AttnCase{2, 70, 4, 2, 16, true},
                                         AttnCase{1, 70, 2, 2, 16, false}));

}  // namespace
}  // namespace flashtick
