// CPU LayerNorm forward against a naive f64 loop: y, mean and rstd; strided and
// in-place views; a row with a large mean (the case one-pass variance gets wrong);
// C = 1; and the errors for bad shapes, dtypes, eps and overlaps.
#include <cmath>

#include "gtest/gtest.h"
#include "kernels/ops/layernorm.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

template <typename T>
void CheckLayerNorm(int64_t M, int64_t C, int64_t pad, bool in_place, double shift, double tol) {
  auto be = MakeCpu(2);
  const int64_t ld = C + pad;
  auto x = RandomVec<T>(M * ld, 21);
  for (auto& v : x) v = static_cast<T>(v + shift);
  auto g = RandomVec<T>(C, 22), b = RandomVec<T>(C, 23);
  const auto x0 = x;
  std::vector<T> y(M * ld), mean(M), rstd(M);
  OpDesc d = Desc(Op::kLayerNorm, DTypeOf<T>());
  d.layernorm.eps = 1e-5f;
  TensorView xv = Strided2D(x, M, C, ld), yv = in_place ? xv : Strided2D(y, M, C, ld);
  ASSERT_TRUE(RunOp(*be, d, {xv, View(g, {C}), View(b, {C})}, {yv, View(mean, {M}), View(rstd, {M})})
                  .ok());
  const auto& out = in_place ? x : y;
  for (int64_t m = 0; m < M; ++m) {
    const T* r = x0.data() + m * ld;
    double mu = 0, var = 0;
    for (int64_t c = 0; c < C; ++c) mu += r[c];
    mu /= C;
    for (int64_t c = 0; c < C; ++c) var += (r[c] - mu) * (r[c] - mu);
    var /= C;
    const double rs = 1.0 / std::sqrt(var + double(1e-5f));
    ASSERT_NEAR(mean[m], mu, tol * (1 + std::fabs(mu)));
    ASSERT_NEAR(rstd[m], rs, tol * rs);
    for (int64_t c = 0; c < C; ++c) {
      const double want = double(g[c]) * (r[c] - mu) * rs + double(b[c]);
      ASSERT_NEAR(out[m * ld + c], want, tol * (1 + std::fabs(want))) << m << "," << c;
    }
  }
}

TEST(LayerNormCpu, MatchesLoop) {
  for (bool ip : {false, true}) {
    CheckLayerNorm<float>(1, 1, 0, ip, 0, 1e-6);
    CheckLayerNorm<float>(333, 64, 0, ip, 0, 1e-6);
    CheckLayerNorm<float>(40, 17, 3, ip, 0, 1e-6);
    CheckLayerNorm<double>(65, 96, 1, ip, 0, 1e-13);
  }
}

// |mean| ≫ σ: E[x²] − μ² would lose every digit of σ² in fp32; two-pass keeps them.
TEST(LayerNormCpu, LargeMeanRows) {
  CheckLayerNorm<float>(50, 64, 0, false, 1e4, 1e-5);
  CheckLayerNorm<double>(50, 64, 0, false, 1e8, 1e-8);
}

TEST(LayerNormCpu, ConstantRowGivesBeta) {
  auto be = MakeCpu(1);
  std::vector<float> x(8, 3.0f), g(8, 2.0f), b(8), y(8), mean(1), rstd(1);
  for (int i = 0; i < 8; ++i) b[i] = float(i);
  OpDesc d = Desc(Op::kLayerNorm, DType::kF32);
  ASSERT_TRUE(RunOp(*be, d, {View(x, {1, 8}), View(g, {8}), View(b, {8})},
                  {View(y, {1, 8}), View(mean, {1}), View(rstd, {1})})
                  .ok());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], b[i]);  // x̂ = 0, finite because eps > 0
  EXPECT_EQ(mean[0], 3.0f);
  EXPECT_NEAR(rstd[0], 1.0 / std::sqrt(1e-5), 1e-1);
}

TEST(LayerNormCpu, RejectsBadInputs) {
  auto be = MakeCpu(1);
  std::vector<float> x(24), g(6), b(6), y(24), mean(4), rstd(4);
  std::vector<double> gd(6);
  OpDesc d = Desc(Op::kLayerNorm, DType::kF32);
  auto code = [&](std::initializer_list<TensorView> in, std::initializer_list<TensorView> out,
                  OpDesc desc) { return RunOp(*be, desc, in, out).code(); };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code({View(x, {4, 6}), View(g, {5}), View(b, {6})},
                 {View(y, {4, 6}), View(mean, {4}), View(rstd, {4})}, d), kInvalid);
  EXPECT_EQ(code({View(x, {4, 6}), View(gd, {6}), View(b, {6})},
                 {View(y, {4, 6}), View(mean, {4}), View(rstd, {4})}, d), kInvalid);
  EXPECT_EQ(code({View(x, {4, 6}), View(g, {6}), View(b, {6})},
                 {View(y, {4, 6}), View(mean, {3}), View(rstd, {4})}, d), kInvalid);
  EXPECT_EQ(code({View(x, {4, 6}), View(g, {6}), View(b, {6})},
                 {View(y, {4, 6}), View(mean, {4}), View(mean, {4})}, d), kInvalid);
  EXPECT_EQ(code({View(x, {4, 6}), View(g, {6}), View(b, {6})}, {View(y, {4, 6})}, d), kInvalid);
  OpDesc bad_eps = d;
  bad_eps.layernorm.eps = 0;
  EXPECT_EQ(code({View(x, {4, 6}), View(g, {6}), View(b, {6})},
                 {View(y, {4, 6}), View(mean, {4}), View(rstd, {4})}, bad_eps), kInvalid);
}

}  // namespace
}  // namespace flashtick::testing
