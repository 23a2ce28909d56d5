// CPU AddBias and Add against naive f64 loops: contiguous, strided and in-place
// views, f32 and f64, and the errors for bad shapes, dtypes and overlapping outputs.
#include "gtest/gtest.h"
#include "kernels/ops/elementwise.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

template <typename T>
void CheckAddBias(int64_t M, int64_t N, int64_t pad, bool in_place) {
  auto be = MakeCpu(2);
  const int64_t ld = N + pad;
  auto x = RandomVec<T>(M * ld + 1, 11), b = RandomVec<T>(N, 12);
  auto y = in_place ? x : RandomVec<T>(M * ld + 1, 13);
  const auto x0 = x, y0 = y;
  TensorView xv = Strided2D(x, M, N, ld), yv = in_place ? xv : Strided2D(y, M, N, ld);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kAddBias, DTypeOf<T>()), {xv, View(b, {N})}, {yv}).ok());
  const auto& out = in_place ? x : y;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n)
      ASSERT_EQ(out[m * ld + n], static_cast<T>(double(x0[m * ld + n]) + double(b[n])));
    for (int64_t n = N; n < ld; ++n) ASSERT_EQ(out[m * ld + n], (in_place ? x0 : y0)[m * ld + n]);
  }
}

TEST(AddBiasCpu, MatchesLoop) {
  for (bool ip : {false, true}) {
    CheckAddBias<float>(1, 1, 0, ip);
    CheckAddBias<float>(300, 64, 0, ip);
    CheckAddBias<float>(17, 5, 3, ip);
    CheckAddBias<double>(129, 33, 2, ip);
  }
}

TEST(AddBiasCpu, Rank3ViewAndStridedLastStep) {
  auto be = MakeCpu(2);
  const int64_t B = 3, T = 5, C = 4;
  auto x = RandomVec<float>(B * T * C, 1), b = RandomVec<float>(C, 2);
  auto y = x;
  ASSERT_TRUE(RunOp(*be, Desc(Op::kAddBias, DType::kF32), {View(x, {B, T, C}), View(b, {C})},
                  {View(y, {B, T, C})})
                  .ok());
  for (int64_t i = 0; i < B * T * C; ++i) ASSERT_EQ(y[i], x[i] + b[i % C]);
  // The last step of each sequence: a [B, C] view with row stride T·C, in place.
  auto z = x;
  TensorView last = Strided2D(z, B, C, T * C, (T - 1) * C);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kAddBias, DType::kF32), {last, View(b, {C})}, {last}).ok());
  for (int64_t i = 0; i < B * T * C; ++i)
    ASSERT_EQ(z[i], (i / C) % T == T - 1 ? x[i] + b[i % C] : x[i]) << i;
}

TEST(AddCpu, MatchesLoopInPlaceAndStrided) {
  auto be = MakeCpu(2);
  const int64_t M = 257, N = 31;
  auto x = RandomVec<double>(M * N, 1), y = RandomVec<double>(M * (N + 2), 2);
  std::vector<double> z(M * N);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kAdd, DType::kF64), {View(x, {M, N}), Strided2D(y, M, N, N + 2)},
                  {View(z, {M, N})})
                  .ok());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) ASSERT_EQ(z[m * N + n], x[m * N + n] + y[m * (N + 2) + n]);
  // In place into Y's strided view.
  auto y0 = y;
  TensorView yv = Strided2D(y, M, N, N + 2);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kAdd, DType::kF64), {View(x, {M, N}), yv}, {yv}).ok());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      ASSERT_EQ(y[m * (N + 2) + n], x[m * N + n] + y0[m * (N + 2) + n]);
}

TEST(ElementwiseCpu, RejectsBadInputs) {
  auto be = MakeCpu(1);
  std::vector<float> x(24), y(24), b(6);
  std::vector<double> bd(6);
  auto invalid = [](absl::Status s) { return s.code() == absl::StatusCode::kInvalidArgument; };
  OpDesc ab = Desc(Op::kAddBias, DType::kF32), add = Desc(Op::kAdd, DType::kF32);
  EXPECT_TRUE(invalid(RunOp(*be, ab, {View(x, {4, 6}), View(b, {5})}, {View(y, {4, 6})})));
  EXPECT_TRUE(invalid(RunOp(*be, ab, {View(x, {4, 6}), View(bd, {6})}, {View(y, {4, 6})})));
  EXPECT_TRUE(invalid(RunOp(*be, ab, {View(x, {4, 6}), View(b, {6})}, {View(y, {6, 4})})));
  // Y overlaps X without being the same view (shifted by one element).
  TensorView shifted = MakeView(x.data() + 1, DType::kF32, DeviceKind::kCpu, {3, 6});
  EXPECT_TRUE(invalid(RunOp(*be, ab, {View(x, {3, 6}), View(b, {6})}, {shifted})));
  EXPECT_TRUE(invalid(RunOp(*be, add, {View(x, {4, 6}), View(y, {6, 4})}, {View(y, {4, 6})})));
  EXPECT_TRUE(invalid(RunOp(*be, add, {View(x, {4, 6})}, {View(y, {4, 6})})));
  // Leading dims that are not whole rows apart.
  TensorView odd = View(x, {2, 2, 3});
  odd.strides = {7, 3, 1};
  EXPECT_TRUE(invalid(RunOp(*be, add, {odd, odd}, {View(y, {2, 2, 3})})));
}

}  // namespace
}  // namespace flashtick::testing
