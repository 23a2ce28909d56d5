// ShiftStepsLater / ShiftStepsEarlier (kernels/step_shift.h) on the CPU backend against
// index loops: a strided column block of a wider buffer as the source, T = 1 (only the
// zero row), the adjoint identity ⟨S x, y⟩ = ⟨x, Sᵀ y⟩ that the backward relies on, and
// bad views refused.
#include "gtest/gtest.h"
#include "kernels/step_shift.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

TEST(StepShift, MovesEachSequenceOneStepAndZeroesTheRowLeftOpen) {
  auto be = MakeCpu();
  for (const int64_t T : {1, 2, 7}) {
    const int64_t B = 3, W = 10, col = 4, cols = 5, M = B * T;
    std::vector<double> buf = RandomVec<double>(static_cast<size_t>(M * W), 11 + T);
    const TensorView src = ColumnBlock(View(buf, {M, W}), col, cols);
    std::vector<double> later(static_cast<size_t>(M * cols), 99.0), earlier = later;
    ASSERT_TRUE(ShiftStepsLater(*be, src, View(later, {M, cols}), B, T).ok());
    ASSERT_TRUE(ShiftStepsEarlier(*be, src, View(earlier, {M, cols}), B, T).ok());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < cols; ++c) {
          const size_t at = static_cast<size_t>((b * T + t) * cols + c);
          const double want_later = t == 0 ? 0.0 : buf[static_cast<size_t>((b * T + t - 1) * W + col + c)];
          const double want_earlier =
              t == T - 1 ? 0.0 : buf[static_cast<size_t>((b * T + t + 1) * W + col + c)];
          EXPECT_EQ(later[at], want_later) << "T " << T << " b " << b << " t " << t;
          EXPECT_EQ(earlier[at], want_earlier) << "T " << T << " b " << b << " t " << t;
        }
  }
}

TEST(StepShift, EarlierIsTheAdjointOfLater) {
  auto be = MakeCpu();
  const int64_t B = 2, T = 9, C = 6, M = B * T;
  std::vector<double> x = RandomVec<double>(static_cast<size_t>(M * C), 1);
  std::vector<double> y = RandomVec<double>(static_cast<size_t>(M * C), 2);
  std::vector<double> sx(x.size()), sty(y.size());
  ASSERT_TRUE(ShiftStepsLater(*be, View(x, {M, C}), View(sx, {M, C}), B, T).ok());
  ASSERT_TRUE(ShiftStepsEarlier(*be, View(y, {M, C}), View(sty, {M, C}), B, T).ok());
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    lhs += sx[i] * y[i];
    rhs += x[i] * sty[i];
  }
  EXPECT_NEAR(lhs, rhs, 1e-12 * (std::fabs(lhs) + 1));
}

TEST(StepShift, RefusesViewsThatAreNotBSequencesOfTRows) {
  auto be = MakeCpu();
  std::vector<double> a(24), b(24), c(12);
  const absl::Status rows = ShiftStepsLater(*be, View(a, {6, 4}), View(b, {6, 4}), 2, 4);
  EXPECT_EQ(rows.code(), absl::StatusCode::kInvalidArgument) << rows;
  EXPECT_NE(rows.message().find("B = 2, T = 4"), std::string::npos) << rows;
  const absl::Status shape = ShiftStepsEarlier(*be, View(a, {6, 4}), View(c, {6, 2}), 2, 3);
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument) << shape;
}

}  // namespace
}  // namespace flashtick::testing
