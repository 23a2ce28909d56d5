// AdamW and Sophia-H steps on the CPU (kernels/ops/optimizer.h): several steps against
// an independent f64 transcription of the published updates (PyTorch's AdamW
// arrangement; Liu et al. 2023 Alg. 3 for Sophia-H), the clipping regimes of
// Sophia-H, steps without a Hessian refresh, fp32 against fp64, and rejected
// hyperparameters.
#include <cmath>

#include "gtest/gtest.h"
#include "tests/grad/grad_test_util.h"

namespace flashtick::grad_test {
namespace {

OpDesc AdamDesc(int64_t step) {
  OpDesc d = Desc(Op::kAdamW);
  d.optimizer.lr = 1e-2f;
  d.optimizer.beta1 = 0.9f;
  d.optimizer.beta2 = 0.95f;
  d.optimizer.eps = 1e-8f;
  d.optimizer.weight_decay = 0.1f;
  d.optimizer.grad_scale = 0.5f;
  d.optimizer.step = step;
  return d;
}

TEST(AdamW, MatchesTorchArrangementOverSteps) {
  const int64_t n = 33;
  auto be = Cpu();
  std::vector<double> p = Randn(n, 70), m(n, 0.0), v(n, 0.0);
  std::vector<double> rp = p, rm = m, rv = v;
  for (int64_t step = 1; step <= 4; ++step) {
    std::vector<double> g = Randn(n, 70 + step);
    OpDesc d = AdamDesc(step);
    ASSERT_TRUE(RunOp(*be, d, {V(g, {n})}, {V(p, {n}), V(m, {n}), V(v, {n})}).ok());
    const OptimizerAttrs& a = d.optimizer;
    // torch.optim.AdamW (single tensor): p *= 1 − lr·wd; m.lerp_; v = β2 v + (1 − β2) g²;
    // denom = √v/√bc2 + ε; p −= (lr/bc1)·m/denom.
    const double bc1 = 1 - std::pow(double(a.beta1), step),
                 bc2 = 1 - std::pow(double(a.beta2), step);
    for (int64_t i = 0; i < n; ++i) {
      const double gi = double(a.grad_scale) * g[i];
      rp[i] *= 1 - double(a.lr) * double(a.weight_decay);
      rm[i] = a.beta1 * rm[i] + (1 - double(a.beta1)) * gi;
      rv[i] = a.beta2 * rv[i] + (1 - double(a.beta2)) * gi * gi;
      const double denom = std::sqrt(rv[i]) / std::sqrt(bc2) + double(a.eps);
      rp[i] -= double(a.lr) / bc1 * rm[i] / denom;
    }
  }
  EXPECT_LT(MaxRelErr(p, rp), 1e-13);
  EXPECT_LT(MaxRelErr(m, rm), 1e-14);
  EXPECT_LT(MaxRelErr(v, rv), 1e-14);
  // fp32 master weights agree with fp64 to fp32 rounding.
  std::vector<float> pf = Cast<float>(rp), mf(n, 0.0f), vf(n, 0.0f), gf = Cast<float>(Randn(n, 79));
  std::vector<double> pd(rp), md(n, 0.0), vd(n, 0.0), gd(gf.begin(), gf.end());
  for (auto& x : pd) x = static_cast<float>(x);
  OpDesc d = AdamDesc(1);
  ASSERT_TRUE(RunOp(*be, d, {V(gd, {n})}, {V(pd, {n}), V(md, {n}), V(vd, {n})}).ok());
  d.dtype = DType::kF32;
  ASSERT_TRUE(RunOp(*be, d, {V(gf, {n})}, {V(pf, {n}), V(mf, {n}), V(vf, {n})}).ok());
  EXPECT_LT(MaxRelErr(pf, pd), 1e-6);
}

OpDesc SophiaDesc() {
  OpDesc d = Desc(Op::kSophiaH);
  d.optimizer.lr = 1e-3f;
  d.optimizer.beta1 = 0.96f;
  d.optimizer.beta2 = 0.99f;
  d.optimizer.rho = 0.05f;
  d.optimizer.eps = 1e-12f;
  d.optimizer.weight_decay = 0.2f;
  return d;
}

TEST(SophiaH, MatchesPaperAlgorithmAndClips) {
  const int64_t n = 40;
  auto be = Cpu();
  std::vector<double> p = Randn(n, 80), m(n, 0.0), h(n, 0.0);
  std::vector<double> rp = p, rm = m, rh = h;
  const OpDesc d = SophiaDesc();
  const OptimizerAttrs& a = d.optimizer;
  for (int step = 1; step <= 6; ++step) {
    std::vector<double> g = Randn(n, 80 + step, 0.01);
    std::vector<double> hhat = Randn(n, 90 + step, 2.0);  // Hutchinson: may be negative
    const bool refresh = step % 3 == 1;                   // k = 3
    TensorView hv = V(hhat, {n});
    if (!refresh) hv.data = nullptr;
    const std::vector<double> h_before = h;
    ASSERT_TRUE(RunOp(*be, d, {V(g, {n}), hv}, {V(p, {n}), V(m, {n}), V(h, {n})}).ok());
    if (!refresh) {
      EXPECT_EQ(h, h_before) << "h must not move without a Hessian estimate";
    }
    for (int64_t i = 0; i < n; ++i) {
      rm[i] = a.beta1 * rm[i] + (1 - double(a.beta1)) * g[i];
      if (refresh) rh[i] = a.beta2 * rh[i] + (1 - double(a.beta2)) * hhat[i];
      rp[i] -= double(a.lr) * double(a.weight_decay) * rp[i];
      const double ratio = rm[i] / std::max(double(a.rho) * rh[i], double(a.eps));
      rp[i] -= double(a.lr) * std::max(-1.0, std::min(1.0, ratio));
    }
  }
  EXPECT_LT(MaxRelErr(p, rp), 1e-13);
  EXPECT_LT(MaxRelErr(m, rm), 1e-14);
  EXPECT_LT(MaxRelErr(h, rh), 1e-14);
  // The three regimes, from θ = 0 with no decay: a large curvature gives the
  // preconditioned step lr·m/(ρh); a negative one saturates at lr·sign(m); a tiny
  // curvature with a large momentum is clipped to lr.
  OpDesc d0 = SophiaDesc();
  d0.optimizer.weight_decay = 0.0f;
  d0.optimizer.beta1 = 0.0f;
  std::vector<double> p3(3, 0.0), m3(3, 0.0), h3 = {100.0, -1.0, 1e-3}, g3 = {0.2, -0.3, 5.0};
  std::vector<double> nohat;
  TensorView none = V(nohat, {3});
  none.data = nullptr;
  ASSERT_TRUE(RunOp(*be, d0, {V(g3, {3}), none}, {V(p3, {3}), V(m3, {3}), V(h3, {3})}).ok());
  const double lr = double(d0.optimizer.lr);
  EXPECT_NEAR(p3[0], -lr * 0.2 / (double(d0.optimizer.rho) * 100.0), 1e-15);
  EXPECT_DOUBLE_EQ(p3[1], lr);
  EXPECT_DOUBLE_EQ(p3[2], -lr);
}

TEST(Optimizers, RejectBadHyperparametersAndShapes) {
  auto be = Cpu();
  std::vector<double> p(4), m(4), v(4), g(4), g5(5);
  OpDesc d = AdamDesc(0);  // step must be >= 1
  absl::Status s = RunOp(*be, d, {V(g, {4})}, {V(p, {4}), V(m, {4}), V(v, {4})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("step"), std::string::npos) << s;
  d = AdamDesc(1);
  d.optimizer.beta2 = 1.0f;
  EXPECT_FALSE(RunOp(*be, d, {V(g, {4})}, {V(p, {4}), V(m, {4}), V(v, {4})}).ok());
  d = AdamDesc(1);
  EXPECT_FALSE(RunOp(*be, d, {V(g5, {5})}, {V(p, {4}), V(m, {4}), V(v, {4})}).ok());
  EXPECT_FALSE(RunOp(*be, d, {V(g, {4})}, {V(p, {4}), V(p, {4}), V(v, {4})}).ok());  // aliasing
  OpDesc sd = SophiaDesc();
  sd.optimizer.rho = 0.0f;
  EXPECT_FALSE(RunOp(*be, sd, {V(g, {4}), V(g, {4})}, {V(p, {4}), V(m, {4}), V(v, {4})}).ok());
  sd = SophiaDesc();
  sd.optimizer.eps = 0.0f;
  EXPECT_FALSE(RunOp(*be, sd, {V(g, {4}), V(g, {4})}, {V(p, {4}), V(m, {4}), V(v, {4})}).ok());
}

}  // namespace
}  // namespace flashtick::grad_test
