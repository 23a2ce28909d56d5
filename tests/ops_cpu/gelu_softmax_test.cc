// CPU Gelu (tanh approximation) and row Softmax against naive f64 loops: strided and
// in-place views, large logits (no overflow), rows that sum to one, and errors.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "kernels/ops/gelu.h"
#include "kernels/ops/softmax.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

double GeluRef(double x) {
  const double k0 = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k0 * (x + 0.044715 * x * x * x)));
}

template <typename T>
void CheckGelu(int64_t M, int64_t C, int64_t pad, bool in_place, double tol) {
  auto be = MakeCpu(2);
  const int64_t ld = C + pad;
  auto x = RandomVec<T>(M * ld, 31, 3.0);
  const auto x0 = x;
  std::vector<T> y(M * ld);
  TensorView xv = Strided2D(x, M, C, ld), yv = in_place ? xv : Strided2D(y, M, C, ld);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kGelu, DTypeOf<T>()), {xv}, {yv}).ok());
  const auto& out = in_place ? x : y;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const double want = GeluRef(x0[m * ld + c]);
      ASSERT_NEAR(out[m * ld + c], want, tol * (1 + std::fabs(want)));
    }
}

TEST(GeluCpu, MatchesLoop) {
  for (bool ip : {false, true}) {
    CheckGelu<float>(1, 1, 0, ip, 1e-7);
    CheckGelu<float>(100, 256, 0, ip, 1e-7);
    CheckGelu<double>(33, 7, 2, ip, 1e-15);
  }
}

TEST(GeluCpu, KnownValues) {
  auto be = MakeCpu(1);
  std::vector<double> x = {0.0, 1.0, -1.0, 10.0, -10.0}, y(5);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kGelu, DType::kF64), {View(x, {5})}, {View(y, {5})}).ok());
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 0.8411919906082768, 1e-15);   // torch gelu(1, approximate='tanh')
  EXPECT_NEAR(y[2], -0.15880800939172324, 1e-15);
  EXPECT_NEAR(y[3], 10.0, 1e-12);
  EXPECT_NEAR(y[4], 0.0, 1e-12);
}

template <typename T>
void CheckSoftmax(int64_t M, int64_t N, int64_t pad, bool in_place, double scale, double tol) {
  auto be = MakeCpu(2);
  const int64_t ld = N + pad;
  auto x = RandomVec<T>(M * ld, 41, scale);
  const auto x0 = x;
  std::vector<T> y(M * ld);
  TensorView xv = Strided2D(x, M, N, ld), yv = in_place ? xv : Strided2D(y, M, N, ld);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kSoftmax, DTypeOf<T>()), {xv}, {yv}).ok());
  const auto& out = in_place ? x : y;
  for (int64_t m = 0; m < M; ++m) {
    long double mx = -INFINITY, sum = 0, total = 0;
    for (int64_t n = 0; n < N; ++n) mx = std::max<long double>(mx, x0[m * ld + n]);
    for (int64_t n = 0; n < N; ++n) sum += std::exp((long double)x0[m * ld + n] - mx);
    for (int64_t n = 0; n < N; ++n) {
      const double want = double(std::exp((long double)x0[m * ld + n] - mx) / sum);
      ASSERT_NEAR(out[m * ld + n], want, tol) << m << "," << n;
      ASSERT_TRUE(std::isfinite(out[m * ld + n]));
      total += out[m * ld + n];
    }
    ASSERT_NEAR(double(total), 1.0, 10 * tol * N);
  }
}

TEST(SoftmaxCpu, MatchesLoop) {
  for (bool ip : {false, true}) {
    CheckSoftmax<float>(1, 1, 0, ip, 1.0, 1e-7);
    CheckSoftmax<float>(500, 3, 0, ip, 1.0, 1e-7);
    CheckSoftmax<float>(20, 300, 5, ip, 4.0, 1e-7);
    CheckSoftmax<double>(20, 300, 5, ip, 4.0, 1e-15);
  }
}

TEST(SoftmaxCpu, HugeLogitsDoNotOverflow) {
  CheckSoftmax<float>(50, 3, 0, false, 1e30, 1e-7);
  CheckSoftmax<double>(50, 8, 0, false, 1e300, 1e-15);
}

TEST(UnaryRowCpu, RejectsBadInputs) {
  auto be = MakeCpu(1);
  std::vector<float> x(12), y(12);
  std::vector<double> yd(12);
  for (Op op : {Op::kGelu, Op::kSoftmax}) {
    OpDesc d = Desc(op, DType::kF32);
    EXPECT_EQ(RunOp(*be, d, {View(x, {3, 4})}, {View(y, {4, 3})}).code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(RunOp(*be, d, {View(x, {3, 4})}, {View(yd, {3, 4})}).code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(RunOp(*be, d, {View(x, {3, 4}), View(x, {3, 4})}, {View(y, {3, 4})}).code(),
              absl::StatusCode::kInvalidArgument);
    TensorView shifted = MakeView(x.data() + 2, DType::kF32, DeviceKind::kCpu, {2, 4});
    EXPECT_EQ(RunOp(*be, d, {View(x, {2, 4})}, {shifted}).code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace flashtick::testing
