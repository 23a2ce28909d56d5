// CPU Matmul (kernels/cpu/matmul.cc) against a naive f64 triple loop written here and
// against MatmulNaive: all four transpose combinations, edge shapes around the tile
// sizes, strided operands, alpha/beta, the fused bias (attrs.bias), thread-count
// independence (bitwise), and the errors for bad inputs (a bad bias among them).
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "kernels/cpu/naive_ops.h"
#include "kernels/ops/matmul.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

struct Case {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
  int64_t pad;        // extra elements per row (row stride = cols + pad)
  bool bias = false;  // attrs.bias: + b[n] on every row
};

// Runs C = alpha·op(A)·op(B) + beta·C0 (+ b) on the backend and checks it against a
// double loop.
template <typename T>
void CheckCase(const Case& c, Backend& be, double tol) {
  const int64_t ar = c.ta ? c.K : c.M, ac = c.ta ? c.M : c.K;
  const int64_t br = c.tb ? c.N : c.K, bc = c.tb ? c.K : c.N;
  const int64_t lda = ac + c.pad, ldb = bc + c.pad, ldc = c.N + c.pad;
  auto a = RandomVec<T>(std::max<int64_t>(1, ar * lda), 1 + c.M);
  auto b = RandomVec<T>(std::max<int64_t>(1, br * ldb), 2 + c.N);
  auto c0 = RandomVec<T>(std::max<int64_t>(1, c.M * ldc), 3 + c.K);
  // N(0, 1) entries: a bias the kernel dropped would miss the tolerance by ~1e6.
  auto bias = RandomVec<T>(std::max<int64_t>(1, c.N), 4 + c.M);
  auto out = c0;
  OpDesc d = Desc(Op::kMatmul, DTypeOf<T>());
  d.matmul = MatmulAttrs{c.ta, c.tb, c.alpha, c.beta, c.bias};
  const TensorView av = Strided2D(a, ar, ac, lda), bv = Strided2D(b, br, bc, ldb);
  const TensorView bias_view = MakeView(bias.data(), DTypeOf<T>(), DeviceKind::kCpu, {c.N});
  const absl::Status s = c.bias ? RunOp(be, d, {av, bv, bias_view}, {Strided2D(out, c.M, c.N, ldc)})
                                : RunOp(be, d, {av, bv}, {Strided2D(out, c.M, c.N, ldc)});
  ASSERT_TRUE(s.ok()) << s;
  for (int64_t m = 0; m < c.M; ++m) {
    for (int64_t n = 0; n < c.N; ++n) {
      double s = 0, mag = 0;
      for (int64_t k = 0; k < c.K; ++k) {
        const double av = c.ta ? a[k * lda + m] : a[m * lda + k];
        const double bv = c.tb ? b[n * ldb + k] : b[k * ldb + n];
        s += av * bv;
        mag += std::fabs(av * bv);
      }
      const double ref = double(c.alpha) * s + double(c.beta) * double(c0[m * ldc + n]) +
                         (c.bias ? double(bias[n]) : 0.0);
      ASSERT_NEAR(out[m * ldc + n], ref, tol * (1 + mag + std::fabs(ref)))
          << "M=" << c.M << " N=" << c.N << " K=" << c.K << " ta=" << c.ta << " tb=" << c.tb
          << " at (" << m << "," << n << ")";
    }
    // Padding between rows is never touched.
    for (int64_t n = c.N; n < ldc; ++n) ASSERT_EQ(out[m * ldc + n], c0[m * ldc + n]);
  }
}

TEST(MatmulCpu, MatchesNaiveLoopF32AndF64) {
  auto be = MakeCpu(2);
  const int64_t sizes[] = {1, 3, 4, 5, 33};
  for (int64_t M : sizes)
    for (int64_t N : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{260}})
      for (int64_t K : {int64_t{1}, int64_t{17}, int64_t{300}})
        for (int t = 0; t < 4; ++t) {
          Case c{M, N, K, bool(t & 1), bool(t & 2), 1.0f, 0.0f, 0};
          CheckCase<float>(c, *be, 1e-6);
          CheckCase<double>(c, *be, 1e-13);
        }
}

TEST(MatmulCpu, AlphaBetaAndStrides) {
  auto be = MakeCpu(2);
  for (int t = 0; t < 4; ++t) {
    CheckCase<float>({37, 45, 29, bool(t & 1), bool(t & 2), 0.5f, 1.0f, 3}, *be, 1e-6);
    CheckCase<double>({70, 9, 513, bool(t & 1), bool(t & 2), -2.0f, 0.25f, 5}, *be, 1e-13);
  }
}

TEST(MatmulCpu, ZeroSizedDims) {
  auto be = MakeCpu(2);
  CheckCase<float>({5, 6, 0, false, false, 1.0f, 0.5f, 0}, *be, 0);  // C = beta·C
  CheckCase<float>({0, 6, 4, false, true, 1.0f, 0.0f, 0}, *be, 0);
  CheckCase<double>({6, 0, 4, true, false, 1.0f, 0.0f, 0}, *be, 0);
}

// The fused bias: b on every row, scaled by neither alpha nor beta; beta = 1
// accumulating into C; every transpose (trans_b is the linear layer's); one row (the
// decode step); odd N; strided operands; K = 0 (C = beta·C + b); M = 0.
TEST(MatmulCpu, FusedBias) {
  auto be = MakeCpu(2);
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    CheckCase<float>({37, 45, 29, ta, tb, 1.0f, 0.0f, 0, true}, *be, 1e-6);
    CheckCase<float>({33, 7, 300, ta, tb, 0.5f, 1.0f, 3, true}, *be, 1e-6);  // C += ½·A·B + b
    CheckCase<double>({1, 261, 17, ta, tb, -2.0f, 0.25f, 5, true}, *be, 1e-13);
    CheckCase<double>({70, 9, 513, ta, tb, 1.0f, 1.0f, 0, true}, *be, 1e-13);
  }
  CheckCase<float>({5, 6, 0, false, false, 1.0f, 0.5f, 0, true}, *be, 1e-6);
  CheckCase<float>({0, 6, 4, false, true, 1.0f, 0.0f, 0, true}, *be, 0);
}

// With A = 0 the product vanishes, so C is exactly b on every row (beta = 0), or C0 + b
// (beta = 1): the bias alone, not hidden in a tolerance.
TEST(MatmulCpu, FusedBiasAloneIsExact) {
  auto be = MakeCpu(2);
  const int64_t M = 3, N = 5, K = 4;
  std::vector<float> a(M * K, 0.0f), w = RandomVec<float>(N * K, 1), b = RandomVec<float>(N, 2);
  std::vector<float> c(M * N, 7.0f);
  OpDesc d = Desc(Op::kMatmul, DType::kF32);
  d.matmul.trans_b = true;
  d.matmul.bias = true;
  ASSERT_TRUE(
      RunOp(*be, d, {View(a, {M, K}), View(w, {N, K}), View(b, {N})}, {View(c, {M, N})}).ok());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) ASSERT_EQ(c[m * N + n], b[n]) << m << "," << n;
  d.matmul.beta = 1.0f;
  ASSERT_TRUE(
      RunOp(*be, d, {View(a, {M, K}), View(w, {N, K}), View(b, {N})}, {View(c, {M, N})}).ok());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) ASSERT_EQ(c[m * N + n], b[n] + b[n]) << m << "," << n;
}

TEST(MatmulCpu, BetaZeroIgnoresNanInC) {
  auto be = MakeCpu(2);
  auto a = RandomVec<float>(6 * 4, 1), b = RandomVec<float>(4 * 5, 2);
  std::vector<float> c(6 * 5, std::numeric_limits<float>::quiet_NaN());
  OpDesc d = Desc(Op::kMatmul, DType::kF32);
  ASSERT_TRUE(RunOp(*be, d, {View(a, {6, 4}), View(b, {4, 5})}, {View(c, {6, 5})}).ok());
  for (float v : c) EXPECT_TRUE(std::isfinite(v));
}

// The summation order is fixed per element, so the fast path equals the naive loop
// and does not depend on the thread count, bit for bit.
TEST(MatmulCpu, BitwiseEqualToNaiveAcrossThreadCounts) {
  const int64_t M = 1000, N = 256, K = 64;
  auto a = RandomVec<float>(M * K, 7), w = RandomVec<float>(N * K, 8);
  std::vector<float> c1(M * N), c2(M * N), c3(M * N);
  OpDesc d = Desc(Op::kMatmul, DType::kF32);
  d.matmul.trans_b = true;
  auto one = MakeCpu(1), two = MakeCpu(2), three = MakeCpu(3);
  ASSERT_TRUE(RunOp(*one, d, {View(a, {M, K}), View(w, {N, K})}, {View(c1, {M, N})}).ok());
  ASSERT_TRUE(RunOp(*three, d, {View(a, {M, K}), View(w, {N, K})}, {View(c2, {M, N})}).ok());
  std::vector<TensorView> in = {View(a, {M, K}), View(w, {N, K})}, out = {View(c3, {M, N})};
  ASSERT_TRUE(cpu::MatmulNaive(d, in, out).ok());
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(c1, c3);
}

// The fast path with the bias equals MatmulNaive bit for bit, at any thread count.
TEST(MatmulCpu, FusedBiasBitwiseEqualToNaive) {
  const int64_t M = 300, N = 259, K = 64;
  auto a = RandomVec<float>(M * K, 9), w = RandomVec<float>(N * K, 10), b = RandomVec<float>(N, 11);
  std::vector<float> c1 = RandomVec<float>(M * N, 12), c2 = c1, c3 = c1;
  OpDesc d = Desc(Op::kMatmul, DType::kF32);
  d.matmul = MatmulAttrs{false, true, 0.75f, 1.0f, true};
  std::vector<TensorView> in = {View(a, {M, K}), View(w, {N, K}), View(b, {N})};
  std::vector<TensorView> o1 = {View(c1, {M, N})}, o2 = {View(c2, {M, N})}, o3 = {View(c3, {M, N})};
  ASSERT_TRUE(MakeCpu(1)->Run(d, in, o1).ok());
  ASSERT_TRUE(MakeCpu(3)->Run(d, in, o2).ok());
  ASSERT_TRUE(cpu::MatmulNaive(d, in, o3).ok());
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(c1, c3);
}

// The CPU rounds C before adding b, so the fused op is bit for bit a matmul followed by
// AddBias (matmul.h: CPU results, trained models among them, do not move).
TEST(MatmulCpu, FusedBiasBitwiseEqualsMatmulThenAddBias) {
  auto be = MakeCpu(2);
  const int64_t M = 67, N = 45, K = 300;
  auto a = RandomVec<float>(M * K, 13), w = RandomVec<float>(N * K, 14);
  auto b = RandomVec<float>(N, 15), c0 = RandomVec<float>(M * N, 16);
  for (float beta : {0.0f, 1.0f}) {
    std::vector<float> fused = c0, pair = c0;
    OpDesc d = Desc(Op::kMatmul, DType::kF32);
    d.matmul = MatmulAttrs{false, true, 1.0f, beta, true};
    ASSERT_TRUE(
        RunOp(*be, d, {View(a, {M, K}), View(w, {N, K}), View(b, {N})}, {View(fused, {M, N})})
            .ok());
    d.matmul.bias = false;
    ASSERT_TRUE(RunOp(*be, d, {View(a, {M, K}), View(w, {N, K})}, {View(pair, {M, N})}).ok());
    ASSERT_TRUE(RunOp(*be, Desc(Op::kAddBias, DType::kF32), {View(pair, {M, N}), View(b, {N})},
                      {View(pair, {M, N})})
                    .ok());
    EXPECT_EQ(fused, pair) << "beta=" << beta;
  }
}

// attrs.gelu rounds as a matmul, AddBias and then Gelu would, bit for bit, with and
// without the bias, in f32 and f64, on the blocked path at two thread counts and on the
// naive loop (matmul.h: the CPU's results do not move when the model fuses its GELU).
// Inputs spread over ±3 so GELU's curved part and both tails are exercised.
TEST(MatmulCpu, FusedGeluBitwiseEqualsMatmulThenGelu) {
  const int64_t M = 70, N = 261, K = 40;
  auto a = RandomVec<float>(M * K, 17), w = RandomVec<float>(N * K, 18);
  auto b = RandomVec<float>(N, 19);
  for (float& v : a) v *= 3.0f;
  for (bool bias : {false, true}) {
    OpDesc d = Desc(Op::kMatmul, DType::kF32);
    d.matmul.trans_b = true;
    d.matmul.bias = bias;
    d.matmul.gelu = true;
    std::vector<TensorView> in = {View(a, {M, K}), View(w, {N, K})};
    if (bias) in.push_back(View(b, {N}));
    std::vector<float> c1(M * N, std::numeric_limits<float>::quiet_NaN()), c2 = c1, c3 = c1, pair = c1;
    std::vector<TensorView> o1 = {View(c1, {M, N})}, o2 = {View(c2, {M, N})}, o3 = {View(c3, {M, N})};
    ASSERT_TRUE(MakeCpu(1)->Run(d, in, o1).ok());
    ASSERT_TRUE(MakeCpu(3)->Run(d, in, o2).ok());
    ASSERT_TRUE(cpu::MatmulNaive(d, in, o3).ok());
    OpDesc plain = d;
    plain.matmul.gelu = false;
    auto be = MakeCpu(2);
    std::vector<TensorView> op = {View(pair, {M, N})};
    ASSERT_TRUE(be->Run(plain, in, op).ok());
    ASSERT_TRUE(
        RunOp(*be, Desc(Op::kGelu, DType::kF32), {View(pair, {M, N})}, {View(pair, {M, N})}).ok());
    EXPECT_EQ(c1, pair) << "bias=" << bias;
    EXPECT_EQ(c2, pair) << "bias=" << bias;
    EXPECT_EQ(c3, pair) << "bias=" << bias;
    int64_t negative = 0;
    for (float v : c1) negative += v < 0.0f;
    EXPECT_GT(negative, 0) << "no input reached GELU's negative lobe";
  }
  // f64: the same identity, K = 0 included (C = GELU(b)).
  for (int64_t k : {int64_t{33}, int64_t{0}}) {
    auto ad = RandomVec<double>(M * std::max<int64_t>(k, 1), 20);
    auto wd = RandomVec<double>(N * std::max<int64_t>(k, 1), 21), bd = RandomVec<double>(N, 22);
    OpDesc d = Desc(Op::kMatmul, DType::kF64);
    d.matmul = MatmulAttrs{false, true, 1.0f, 0.0f, true, true};
    std::vector<double> fused(M * N), pair(M * N);
    std::vector<TensorView> in = {View(ad, {M, k}), View(wd, {N, k}), View(bd, {N})};
    std::vector<TensorView> of = {View(fused, {M, N})}, op = {View(pair, {M, N})};
    auto be = MakeCpu(2);
    ASSERT_TRUE(be->Run(d, in, of).ok());
    d.matmul.gelu = false;
    ASSERT_TRUE(be->Run(d, in, op).ok());
    ASSERT_TRUE(
        RunOp(*be, Desc(Op::kGelu, DType::kF64), {View(pair, {M, N})}, {View(pair, {M, N})}).ok());
    EXPECT_EQ(fused, pair) << "K=" << k;
  }
}

// GELU of an accumulated C (beta ≠ 0) is refused: no layer computes it, and a fused
// epilogue would have to read C first.
TEST(MatmulCpu, FusedGeluRefusesBeta) {
  auto be = MakeCpu(1);
  std::vector<float> a(12), w(12), c(9);
  OpDesc d = Desc(Op::kMatmul, DType::kF32);
  d.matmul.trans_b = true;
  d.matmul.gelu = true;
  d.matmul.beta = 1.0f;
  const absl::Status s = RunOp(*be, d, {View(a, {3, 4}), View(w, {3, 4})}, {View(c, {3, 3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("gelu needs beta = 0"), std::string::npos) << s;
  d.matmul.beta = 0.0f;
  EXPECT_TRUE(RunOp(*be, d, {View(a, {3, 4}), View(w, {3, 4})}, {View(c, {3, 3})}).ok());
}

// A bias of the wrong shape, rank, dtype or stride, a bias without attrs.bias (and the
// flag without one), and a bias overlapping C: InvalidArgument naming the bias.
TEST(MatmulCpu, RejectsBadBias) {
  auto be = MakeCpu(1);
  std::vector<float> a(12), w(12), c(9), b(8);
  std::vector<double> bd(3);
  OpDesc d = Desc(Op::kMatmul, DType::kF32);
  d.matmul.trans_b = true;
  d.matmul.bias = true;
  const TensorView A = View(a, {3, 4}), W = View(w, {3, 4}), C = View(c, {3, 3});
  auto expect_invalid = [&](absl::Status s, const char* what, const char* needle) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what << ": " << s;
    EXPECT_NE(s.message().find(needle), std::string::npos) << what << ": " << s;
  };
  ASSERT_TRUE(RunOp(*be, d, {A, W, View(b, {3})}, {C}).ok());
  expect_invalid(RunOp(*be, d, {A, W, View(b, {4})}, {C}), "length N+1", "bias b must be");
  expect_invalid(RunOp(*be, d, {A, W, View(b, {2})}, {C}), "length N-1", "bias b must be");
  expect_invalid(RunOp(*be, d, {A, W, View(b, {1, 3})}, {C}), "rank 2", "bias b must be");
  expect_invalid(RunOp(*be, d, {A, W, View(bd, {3})}, {C}), "f64 on f32", "bias b must be fp32");
  TensorView strided = View(b, {3});
  strided.strides[0] = 2;
  expect_invalid(RunOp(*be, d, {A, W, strided}, {C}), "strided", "contiguous");
  expect_invalid(RunOp(*be, d, {A, W}, {C}), "flag without b", "attrs.bias");
  expect_invalid(RunOp(*be, d, {A, W, View(c, {3})}, {C}), "b inside C", "overlap b");
  OpDesc plain = d;
  plain.matmul.bias = false;
  expect_invalid(RunOp(*be, plain, {A, W, View(b, {3})}, {C}), "b without flag", "attrs.bias");
}

TEST(MatmulCpu, RejectsBadInputs) {
  auto be = MakeCpu(1);
  std::vector<float> a(12), b(16), c(16);
  std::vector<double> bd(12);
  OpDesc d = Desc(Op::kMatmul, DType::kF32);
  auto expect_invalid = [&](absl::Status s, const char* what) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what << ": " << s;
    EXPECT_FALSE(s.message().empty());
  };
  // inner dims differ: [3,4]·[3,4]
  expect_invalid(RunOp(*be, d, {View(a, {3, 4}), View(b, {3, 4})}, {View(c, {3, 4})}), "inner");
  // wrong C shape: [3,4]·[4,3] -> [3,3]
  expect_invalid(RunOp(*be, d, {View(a, {3, 4}), View(b, {4, 3})}, {View(c, {4, 4})}), "C shape");
  // rank 3
  expect_invalid(RunOp(*be, d, {View(a, {1, 3, 4}), View(b, {4, 3})}, {View(c, {3, 3})}), "rank");
  // dtype mismatch
  expect_invalid(RunOp(*be, d, {View(a, {3, 4}), View(bd, {4, 3})}, {View(c, {3, 3})}), "dtype");
  // C aliases A
  expect_invalid(RunOp(*be, d, {View(a, {3, 4}), View(b, {4, 4})}, {View(a, {3, 4})}), "alias");
  // non-contiguous last dim
  TensorView bad = View(a, {3, 2});
  bad.strides = {4, 2};
  expect_invalid(RunOp(*be, d, {bad, View(b, {2, 3})}, {View(c, {3, 3})}), "stride");
  // arity
  expect_invalid(RunOp(*be, d, {View(a, {3, 4})}, {View(c, {3, 3})}), "arity");
  // fp16 is not a CPU compute dtype
  OpDesc h = Desc(Op::kMatmul, DType::kF16);
  EXPECT_EQ(RunOp(*be, h, {View(a, {3, 4}), View(b, {4, 3})}, {View(c, {3, 3})}).code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace flashtick::testing
