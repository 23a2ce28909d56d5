// LayerNorm backward and backward-over-backward on the CPU (kernels/ops/layernorm_bwd.h):
// (a) kLayerNormBwd against central finite differences of a plain f64 forward;
// (b) kLayerNormBwdBwd against finite differences of the CPU backward itself (the VJP
// of the VJP, with random cotangents gX, gγ, gβ); plus strided views, fp32 against
// fp64, thread-count determinism and rejected arguments.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "tests/grad/grad_test_util.h"

namespace flashtick::grad_test {
namespace {

constexpr double kEps = 1e-5;

// y = γ∘(x − μ)·r + β per row: the forward being differentiated, f64.
std::vector<double> LayerNormRef(const std::vector<double>& x, const std::vector<double>& g,
                                 const std::vector<double>& b, int64_t M, int64_t C) {
  std::vector<double> y(M * C);
  for (int64_t m = 0; m < M; ++m) {
    double mu = 0, var = 0;
    for (int64_t c = 0; c < C; ++c) mu += x[m * C + c] / C;
    for (int64_t c = 0; c < C; ++c) var += (x[m * C + c] - mu) * (x[m * C + c] - mu) / C;
    const double r = 1.0 / std::sqrt(var + kEps);
    for (int64_t c = 0; c < C; ++c) y[m * C + c] = g[c] * (x[m * C + c] - mu) * r + b[c];
  }
  return y;
}

struct Bwd {
  std::vector<double> dx, dg, db;
};

Bwd RunBwd(Backend& be, std::vector<double>& x, std::vector<double>& g, std::vector<double>& dy,
           int64_t M, int64_t C) {
  Bwd o{std::vector<double>(M * C), std::vector<double>(C), std::vector<double>(C)};
  OpDesc d = Desc(Op::kLayerNormBwd);
  d.layernorm.eps = kEps;
  absl::Status s = RunOp(be, d, {V(x, {M, C}), V(g, {C}), V(dy, {M, C})},
                         {V(o.dx, {M, C}), V(o.dg, {C}), V(o.db, {C})});
  EXPECT_TRUE(s.ok()) << s;
  return o;
}

class LayerNormGrad : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(LayerNormGrad, BwdMatchesFiniteDifferences) {
  // Plain variables, not a structured binding: clang 14 (the sanitizer stage) cannot
  // capture a binding in the lambdas below.
  const int64_t M = GetParam().first, C = GetParam().second;
  auto be = Cpu();
  std::vector<double> x = Randn(M * C, 1, 1.5), g = Randn(C, 2), b = Randn(C, 3),
                      w = Randn(M * C, 4);
  for (int64_t i = 0; i < M * C; ++i) x[i] += 0.3 * (i % 3);  // non-zero row means
  Bwd got = RunBwd(*be, x, g, w, M, C);
  auto loss = [&] { return Dot(w, LayerNormRef(x, g, b, M, C)); };
  const double ex = MaxRelErr(got.dx, NumericGrad(&x, loss));
  const double eg = MaxRelErr(got.dg, NumericGrad(&g, loss));
  const double eb = MaxRelErr(got.db, NumericGrad(&b, loss));
  std::printf("layernorm_bwd_vs_fd(M=%ld,C=%ld): dX %.1e dγ %.1e dβ %.1e\n", long(M), long(C), ex,
              eg, eb);
  EXPECT_LT(ex, 1e-7);
  EXPECT_LT(eg, 1e-7);
  EXPECT_LT(eb, 1e-7);
}

TEST_P(LayerNormGrad, BwdBwdMatchesFiniteDifferencesOfBwd) {
  // Plain variables, not a structured binding: clang 14 (the sanitizer stage) cannot
  // capture a binding in the lambdas below.
  const int64_t M = GetParam().first, C = GetParam().second;
  auto be = Cpu();
  std::vector<double> x = Randn(M * C, 11, 1.2), g = Randn(C, 12), dy = Randn(M * C, 13);
  std::vector<double> gx = Randn(M * C, 14), gg = Randn(C, 15), gb = Randn(C, 16);
  std::vector<double> ox(M * C), og(C), ody(M * C);
  OpDesc d = Desc(Op::kLayerNormBwdBwd);
  d.layernorm.eps = kEps;
  absl::Status s =
      RunOp(*be, d, {V(x, {M, C}), V(g, {C}), V(dy, {M, C}), V(gx, {M, C}), V(gg, {C}), V(gb, {C})},
            {V(ox, {M, C}), V(og, {C}), V(ody, {M, C})});
  ASSERT_TRUE(s.ok()) << s;
  // Φ(X, γ, dY) = ⟨gX, dX⟩ + ⟨gγ, dγ⟩ + ⟨gβ, dβ⟩ through the CPU backward op.
  auto phi = [&] {
    Bwd o = RunBwd(*be, x, g, dy, M, C);
    return Dot(gx, o.dx) + Dot(gg, o.dg) + Dot(gb, o.db);
  };
  const double ex = MaxRelErr(ox, NumericGrad(&x, phi));
  const double eg = MaxRelErr(og, NumericGrad(&g, phi));
  const double ed = MaxRelErr(ody, NumericGrad(&dy, phi));
  std::printf("layernorm_bwd_bwd_vs_fd(M=%ld,C=%ld): ∂X %.1e ∂γ %.1e ∂dY %.1e\n", long(M), long(C),
              ex, eg, ed);
  EXPECT_LT(ex, 1e-6);
  EXPECT_LT(eg, 1e-7);
  EXPECT_LT(ed, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormGrad,
                         ::testing::Values(std::make_pair(1, 3), std::make_pair(5, 8),
                                           std::make_pair(70, 6)));  // 70 rows: two row blocks

TEST(LayerNormBwd, StridedViewsFp32AndThreadCounts) {
  const int64_t M = 200, C = 24, stride = 40;  // X read from a wider buffer
  auto be1 = Cpu(1), be2 = Cpu(2);
  std::vector<double> x = Randn(M * C, 21), g = Randn(C, 22), dy = Randn(M * C, 23);
  Bwd ref = RunBwd(*be2, x, g, dy, M, C);
  std::vector<double> wide(M * stride, NAN);
  for (int64_t m = 0; m < M; ++m) std::memcpy(&wide[m * stride], &x[m * C], C * sizeof(double));
  TensorView xs = V(wide, {M, C});
  xs.strides[0] = stride;
  Bwd o{std::vector<double>(M * C), std::vector<double>(C), std::vector<double>(C)};
  OpDesc d = Desc(Op::kLayerNormBwd);
  d.layernorm.eps = kEps;
  ASSERT_TRUE(
      RunOp(*be2, d, {xs, V(g, {C}), V(dy, {M, C})}, {V(o.dx, {M, C}), V(o.dg, {C}), V(o.db, {C})})
          .ok());
  EXPECT_EQ(o.dx, ref.dx);
  EXPECT_EQ(o.dg, ref.dg);
  // fp32 against fp64, and the same bits on one and two threads.
  auto xf = Cast<float>(x), gf = Cast<float>(g), dyf = Cast<float>(dy);
  std::vector<float> dx1(M * C), dg1(C), db1(C), dx2(M * C), dg2(C), db2(C);
  d.dtype = DType::kF32;
  ASSERT_TRUE(RunOp(*be1, d, {V(xf, {M, C}), V(gf, {C}), V(dyf, {M, C})},
                    {V(dx1, {M, C}), V(dg1, {C}), V(db1, {C})})
                  .ok());
  ASSERT_TRUE(RunOp(*be2, d, {V(xf, {M, C}), V(gf, {C}), V(dyf, {M, C})},
                    {V(dx2, {M, C}), V(dg2, {C}), V(db2, {C})})
                  .ok());
  EXPECT_EQ(0, std::memcmp(dg1.data(), dg2.data(), C * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(db1.data(), db2.data(), C * sizeof(float)));
  EXPECT_LT(MaxRelErr(dx1, ref.dx), 1e-5);
  EXPECT_LT(MaxRelErr(dg1, ref.dg), 1e-5);
}

TEST(LayerNormBwd, RejectsBadArguments) {
  auto be = Cpu();
  std::vector<double> x(12), g(4), dy(12), dx(12), dg(4), db(4), g3(3);
  OpDesc d = Desc(Op::kLayerNormBwd);
  // γ of the wrong width, dX aliasing dY, fp32 γ with fp64 rows, too few outputs.
  EXPECT_FALSE(RunOp(*be, d, {V(x, {3, 4}), V(g3, {3}), V(dy, {3, 4})},
                     {V(dx, {3, 4}), V(dg, {4}), V(db, {4})})
                   .ok());
  EXPECT_FALSE(RunOp(*be, d, {V(x, {3, 4}), V(g, {4}), V(dy, {3, 4})},
                     {V(dy, {3, 4}), V(dg, {4}), V(db, {4})})
                   .ok());
  std::vector<float> gf(4);
  EXPECT_FALSE(RunOp(*be, d, {V(x, {3, 4}), V(gf, {4}), V(dy, {3, 4})},
                     {V(dx, {3, 4}), V(dg, {4}), V(db, {4})})
                   .ok());
  absl::Status s = RunOp(*be, d, {V(x, {3, 4}), V(g, {4}), V(dy, {3, 4})}, {V(dx, {3, 4})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

}  // namespace
}  // namespace flashtick::grad_test
