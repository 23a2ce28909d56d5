// GELU, softmax cross-entropy and bias-gradient ops on the CPU (kernels/ops/gelu_bwd.h,
// cross_entropy.h, bias_grad.h): each backward against central finite differences of
// an f64 forward, each backward-over-backward against finite differences of the CPU
// backward with random cotangents; ignore labels, edge shapes, fp32 and bad input.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "tests/grad/grad_test_util.h"

namespace flashtick::grad_test {
namespace {

double GeluRef(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

std::vector<double> GeluBwdOp(Backend& be, std::vector<double>& x, std::vector<double>& dy,
                              int64_t M, int64_t C) {
  std::vector<double> dx(M * C);
  absl::Status s = RunOp(be, Desc(Op::kGeluBwd), {V(x, {M, C}), V(dy, {M, C})}, {V(dx, {M, C})});
  EXPECT_TRUE(s.ok()) << s;
  return dx;
}

TEST(GeluGrad, BwdAndBwdBwdMatchFiniteDifferences) {
  const int64_t M = 4, C = 9;
  auto be = Cpu();
  std::vector<double> x = Randn(M * C, 31, 2.0), dy = Randn(M * C, 32), gdx = Randn(M * C, 33);
  x[0] = 0.0, x[1] = -6.0, x[2] = 6.0;  // the origin and the saturated tails
  std::vector<double> dx = GeluBwdOp(*be, x, dy, M, C);
  auto loss = [&] {
    double s = 0;
    for (int64_t i = 0; i < M * C; ++i) s += dy[i] * GeluRef(x[i]);
    return s;
  };
  const double e1 = MaxRelErr(dx, NumericGrad(&x, loss));
  std::vector<double> ox(M * C), ody(M * C);
  absl::Status s = RunOp(*be, Desc(Op::kGeluBwdBwd), {V(x, {M, C}), V(dy, {M, C}), V(gdx, {M, C})},
                         {V(ox, {M, C}), V(ody, {M, C})});
  ASSERT_TRUE(s.ok()) << s;
  auto phi = [&] { return Dot(gdx, GeluBwdOp(*be, x, dy, M, C)); };
  const double e2 = MaxRelErr(ox, NumericGrad(&x, phi));
  const double e3 = MaxRelErr(ody, NumericGrad(&dy, phi));
  std::printf("gelu_bwd_vs_fd: dX %.1e; gelu_bwd_bwd_vs_fd: ∂X %.1e ∂dY %.1e\n", e1, e2, e3);
  EXPECT_LT(e1, 1e-8);
  EXPECT_LT(e2, 1e-7);
  EXPECT_LT(e3, 1e-8);
  // In place: dX may be dY.
  std::vector<double> inplace = dy;
  ASSERT_TRUE(
      RunOp(*be, Desc(Op::kGeluBwd), {V(x, {M, C}), V(inplace, {M, C})}, {V(inplace, {M, C})})
          .ok());
  EXPECT_EQ(inplace, dx);
}

struct CeProblem {
  int64_t M, K;
  std::vector<double> z, w, g;
  std::vector<int32_t> y;
};

CeProblem MakeCe(int64_t M, int64_t K, uint64_t seed) {
  CeProblem p{M, K, Randn(M * K, seed, 2.0), Randn(M, seed + 1), Randn(M * K, seed + 2), {}};
  for (int64_t m = 0; m < M; ++m) p.y.push_back(m % 4 == 3 ? -1 : static_cast<int32_t>(m % K));
  return p;
}

std::vector<double> CeLoss(Backend& be, CeProblem& p) {
  std::vector<double> loss(p.M);
  absl::Status s = RunOp(be, Desc(Op::kSoftmaxCrossEntropy), {V(p.z, {p.M, p.K}), V(p.y, {p.M})},
                         {V(loss, {p.M})});
  EXPECT_TRUE(s.ok()) << s;
  return loss;
}

std::vector<double> CeBwd(Backend& be, CeProblem& p) {
  std::vector<double> dz(p.M * p.K);
  absl::Status s = RunOp(be, Desc(Op::kSoftmaxCrossEntropyBwd),
                         {V(p.z, {p.M, p.K}), V(p.y, {p.M}), V(p.w, {p.M})}, {V(dz, {p.M, p.K})});
  EXPECT_TRUE(s.ok()) << s;
  return dz;
}

TEST(CrossEntropyGrad, LossBwdBwdBwdMatchFiniteDifferences) {
  for (int64_t K : {1, 3, 5}) {
    auto be = Cpu();
    CeProblem p = MakeCe(9, K, 40 + K);
    std::vector<double> loss = CeLoss(*be, p);
    for (int64_t m = 0; m < p.M; ++m) {  // against a direct f64 formula
      double mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < K; ++k) mx = std::max(mx, p.z[m * K + k]);
      for (int64_t k = 0; k < K; ++k) s += std::exp(p.z[m * K + k] - mx);
      const double want = p.y[m] < 0 ? 0.0 : mx + std::log(s) - p.z[m * K + p.y[m]];
      EXPECT_NEAR(loss[m], want, 1e-14 * std::max(1.0, want));
    }
    auto l = [&] { return Dot(p.w, CeLoss(*be, p)); };
    const double e1 = MaxRelErr(CeBwd(*be, p), NumericGrad(&p.z, l));
    std::vector<double> oz(p.M * K), ow(p.M);
    absl::Status s = RunOp(*be, Desc(Op::kSoftmaxCrossEntropyBwdBwd),
                           {V(p.z, {p.M, K}), V(p.y, {p.M}), V(p.w, {p.M}), V(p.g, {p.M, K})},
                           {V(oz, {p.M, K}), V(ow, {p.M})});
    ASSERT_TRUE(s.ok()) << s;
    auto phi = [&] { return Dot(p.g, CeBwd(*be, p)); };
    const double e2 = MaxRelErr(oz, NumericGrad(&p.z, phi));
    const double e3 = MaxRelErr(ow, NumericGrad(&p.w, phi));
    std::printf("cross_entropy(M=9,K=%ld): bwd %.1e; bwd_bwd ∂z %.1e ∂dloss %.1e\n", long(K), e1,
                e2, e3);
    EXPECT_LT(e1, 1e-8);
    EXPECT_LT(e2, 1e-7);
    EXPECT_LT(e3, 1e-8);
    for (int64_t m = 3; m < p.M; m += 4) {  // ignored rows: exactly zero everywhere
      EXPECT_EQ(loss[m], 0.0);
      EXPECT_EQ(ow[m], 0.0);
      for (int64_t k = 0; k < K; ++k) EXPECT_EQ(oz[m * K + k], 0.0);
    }
  }
}

TEST(CrossEntropyGrad, RejectsLabelsOutOfRange) {
  auto be = Cpu();
  CeProblem p = MakeCe(4, 3, 50);
  p.y[2] = 3;
  std::vector<double> loss(4);
  absl::Status s =
      RunOp(*be, Desc(Op::kSoftmaxCrossEntropy), {V(p.z, {4, 3}), V(p.y, {4})}, {V(loss, {4})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("label 3 at row 2"), std::string::npos) << s;
  p.y[2] = -2;  // not the ignore label either
  EXPECT_FALSE(
      RunOp(*be, Desc(Op::kSoftmaxCrossEntropy), {V(p.z, {4, 3}), V(p.y, {4})}, {V(loss, {4})})
          .ok());
}

TEST(BiasGrad, ColumnSumsDeterministicAcrossThreads) {
  const int64_t M = 1000, N = 7;  // four row blocks of 256
  std::vector<double> dy = Randn(M * N, 60);
  std::vector<double> db(N);
  auto be = Cpu();
  ASSERT_TRUE(RunOp(*be, Desc(Op::kBiasGrad), {V(dy, {10, 100, N})}, {V(db, {N})}).ok());
  std::vector<double> want(N, 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) want[n] += dy[m * N + n];
  EXPECT_LT(MaxRelErr(db, want), 1e-14);
  std::vector<float> dyf = Cast<float>(dy), d1(N), d2(N);
  auto be1 = Cpu(1);
  ASSERT_TRUE(RunOp(*be1, Desc(Op::kBiasGrad, DType::kF32), {V(dyf, {M, N})}, {V(d1, {N})}).ok());
  ASSERT_TRUE(RunOp(*be, Desc(Op::kBiasGrad, DType::kF32), {V(dyf, {M, N})}, {V(d2, {N})}).ok());
  EXPECT_EQ(0, std::memcmp(d1.data(), d2.data(), N * sizeof(float)));
  EXPECT_LT(MaxRelErr(d1, want), 1e-6);
  std::vector<double> empty;  // M = 0 gives zeros
  ASSERT_TRUE(RunOp(*be, Desc(Op::kBiasGrad), {V(empty, {0, N})}, {V(db, {N})}).ok());
  EXPECT_EQ(db, std::vector<double>(N, 0.0));
}

}  // namespace
}  // namespace flashtick::grad_test
