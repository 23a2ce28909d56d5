// CPU rotary embedding against a naive f64 loop on strided [B, T, H, D] views (q and
// k slices of a fused QKV buffer, rotated in place), position offsets, the inverse
// (the VJP: ⟨rope(x), g⟩ = ⟨x, rope⁻¹(g)⟩), the relative-position property, and errors.
#include <cmath>

#include "gtest/gtest.h"
#include "kernels/ops/rope.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

// y for one element pair, from the RoFormer definition.
void RopeRef(double x0, double x1, double pos, int64_t i, int64_t D, double theta, double* y0,
             double* y1) {
  const double a = pos * std::pow(theta, -2.0 * i / D);
  *y0 = x0 * std::cos(a) - x1 * std::sin(a);
  *y1 = x0 * std::sin(a) + x1 * std::cos(a);
}

// A [B, T, H, D] view at `offset` inside a buffer whose rows are `width` wide.
template <typename T>
TensorView Slice(std::vector<T>& buf, int64_t B, int64_t Tn, int64_t H, int64_t D, int64_t width,
                 int64_t offset) {
  TensorView v = MakeView(buf.data() + offset, DTypeOf<T>(), DeviceKind::kCpu, {B, Tn, H, D});
  v.strides = {Tn * width, width, D, 1};
  return v;
}

template <typename T>
void CheckQkvInPlace(int64_t B, int64_t Tn, int64_t H, int64_t Hkv, int64_t D, int64_t offset,
                     double tol) {
  auto be = MakeCpu(2);
  const int64_t W = (H + 2 * Hkv) * D;
  auto qkv = RandomVec<T>(B * Tn * W, 51);
  const auto orig = qkv;
  OpDesc d = Desc(Op::kRope, DTypeOf<T>());
  d.rope.theta = 10000.0f;
  d.rope.position_offset = offset;
  TensorView q = Slice(qkv, B, Tn, H, D, W, 0), k = Slice(qkv, B, Tn, Hkv, D, W, H * D);
  ASSERT_TRUE(RunOp(*be, d, {q}, {q}).ok());
  ASSERT_TRUE(RunOp(*be, d, {k}, {k}).ok());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < Tn; ++t)
      for (int64_t c = 0; c < W; c += 2) {
        const int64_t at = (b * Tn + t) * W + c;
        double y0 = orig[at], y1 = orig[at + 1];
        if (c < (H + Hkv) * D) {  // q and k rotate; v stays
          const int64_t i = (c % D) / 2;
          RopeRef(orig[at], orig[at + 1], double(offset + t), i, D, 10000.0, &y0, &y1);
        }
        ASSERT_NEAR(qkv[at], y0, tol) << b << "," << t << "," << c;
        ASSERT_NEAR(qkv[at + 1], y1, tol);
      }
}

TEST(RopeCpu, MatchesLoopOnFusedQkvSlices) {
  CheckQkvInPlace<float>(2, 7, 4, 2, 16, 0, 2e-6);
  CheckQkvInPlace<float>(1, 300, 2, 2, 8, 23000, 2e-6);  // positions near the end of a day
  CheckQkvInPlace<double>(3, 5, 3, 1, 2, 5, 1e-13);
  CheckQkvInPlace<double>(1, 1, 1, 1, 64, 0, 1e-13);
}

// ⟨rope(x), g⟩ = ⟨x, rope_inverse(g)⟩ and rope_inverse(rope(x)) = x.
TEST(RopeCpu, InverseIsTheVjp) {
  auto be = MakeCpu(2);
  const int64_t B = 2, Tn = 9, H = 3, D = 8, n = B * Tn * H * D;
  auto x = RandomVec<double>(n, 61), g = RandomVec<double>(n, 62);
  std::vector<double> y(n), gi(n), back(n);
  OpDesc f = Desc(Op::kRope, DType::kF64);
  f.rope.position_offset = 11;
  OpDesc inv = f;
  inv.rope.inverse = true;
  ASSERT_TRUE(RunOp(*be, f, {View(x, {B, Tn, H, D})}, {View(y, {B, Tn, H, D})}).ok());
  ASSERT_TRUE(RunOp(*be, inv, {View(g, {B, Tn, H, D})}, {View(gi, {B, Tn, H, D})}).ok());
  ASSERT_TRUE(RunOp(*be, inv, {View(y, {B, Tn, H, D})}, {View(back, {B, Tn, H, D})}).ok());
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < n; ++i) {
    lhs += y[i] * g[i];
    rhs += x[i] * gi[i];
    ASSERT_NEAR(back[i], x[i], 1e-13);
  }
  EXPECT_NEAR(lhs, rhs, 1e-12 * (1 + std::fabs(lhs)));
}

// q·k after rotation depends on positions only through their difference.
TEST(RopeCpu, DotProductDependsOnRelativePosition) {
  auto be = MakeCpu(1);
  const int64_t D = 16;
  auto q = RandomVec<double>(D, 71), k = RandomVec<double>(D, 72);
  auto dot_at = [&](int64_t pq, int64_t pk) {
    std::vector<double> a = q, b = k;
    OpDesc d = Desc(Op::kRope, DType::kF64);
    d.rope.position_offset = pq;
    EXPECT_TRUE(RunOp(*be, d, {View(a, {1, 1, 1, D})}, {View(a, {1, 1, 1, D})}).ok());
    d.rope.position_offset = pk;
    EXPECT_TRUE(RunOp(*be, d, {View(b, {1, 1, 1, D})}, {View(b, {1, 1, 1, D})}).ok());
    double s = 0;
    for (int64_t i = 0; i < D; ++i) s += a[i] * b[i];
    return s;
  };
  EXPECT_NEAR(dot_at(10, 3), dot_at(20010, 20003), 1e-9);
  EXPECT_GT(std::fabs(dot_at(10, 3) - dot_at(10, 4)), 1e-6);
}

// Partial rotary: the leading R dims are exactly a rotary embedding of head dim R, the
// others pass through, in place and out of place; R = 0 is the identity.
TEST(RopeCpu, PartialRotaryRotatesTheLeadingDimsOnly) {
  auto be = MakeCpu(2);
  const int64_t B = 2, Tn = 6, H = 3, D = 10, n = B * Tn * H * D;
  for (int64_t R : {0, 4, 10}) {
    for (bool in_place : {false, true}) {
      const auto x = RandomVec<double>(n, 81 + R);
      std::vector<double> y = in_place ? x : std::vector<double>(n, -7.0);
      std::vector<double> src = x;
      OpDesc d = Desc(Op::kRope, DType::kF64);
      d.rope.theta = 50.0f;
      d.rope.position_offset = 3;
      d.rope.rotary_dims = R;
      TensorView xv = in_place ? View(y, {B, Tn, H, D}) : View(src, {B, Tn, H, D});
      ASSERT_TRUE(RunOp(*be, d, {xv}, {View(y, {B, Tn, H, D})}).ok());
      for (int64_t row = 0; row < B * Tn * H; ++row) {
        const int64_t t = (row / H) % Tn;
        for (int64_t c = 0; c < D; c += 2) {
          const int64_t at = row * D + c;
          double y0 = x[at], y1 = x[at + 1];
          if (c < R) RopeRef(x[at], x[at + 1], double(3 + t), c / 2, R, 50.0, &y0, &y1);
          ASSERT_NEAR(y[at], y0, 1e-13) << "R=" << R << " row " << row << " dim " << c;
          ASSERT_NEAR(y[at + 1], y1, 1e-13) << "R=" << R << " row " << row << " dim " << c + 1;
        }
      }
    }
  }
}

TEST(RopeCpu, RejectsBadInputs) {
  auto be = MakeCpu(1);
  std::vector<float> x(2 * 3 * 2 * 6), y(x.size());
  OpDesc d = Desc(Op::kRope, DType::kF32);
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(RunOp(*be, d, {View(x, {2, 3, 12})}, {View(y, {2, 3, 12})}).code(), kInvalid);
  EXPECT_EQ(RunOp(*be, d, {View(x, {2, 3, 4, 3})}, {View(y, {2, 3, 4, 3})}).code(), kInvalid);  // odd D
  EXPECT_EQ(RunOp(*be, d, {View(x, {2, 3, 2, 6})}, {View(y, {2, 3, 6, 2})}).code(), kInvalid);
  OpDesc bad = d;
  bad.rope.theta = 0;
  EXPECT_EQ(RunOp(*be, bad, {View(x, {2, 3, 2, 6})}, {View(y, {2, 3, 2, 6})}).code(), kInvalid);
  bad = d;
  bad.rope.position_offset = -1;
  EXPECT_EQ(RunOp(*be, bad, {View(x, {2, 3, 2, 6})}, {View(y, {2, 3, 2, 6})}).code(), kInvalid);
  for (int64_t r : {-2, 3, 8}) {  // below −1, odd, wider than D = 6
    bad = d;
    bad.rope.rotary_dims = r;
    EXPECT_EQ(RunOp(*be, bad, {View(x, {2, 3, 2, 6})}, {View(y, {2, 3, 2, 6})}).code(), kInvalid)
        << "rotary_dims " << r;
  }
}

}  // namespace
}  // namespace flashtick::testing
