// CPU Cast between fp32, fp64, bf16 and fp16. Oracles written here, independent of
// kernels/common/half.h: each 16-bit format's finite values are enumerated from
// their definition (sign, exponent, mantissa) and sorted; the expected rounding of x
// is the neighbour on x's side of the exact midpoint, the even pattern on a tie, and
// inf past the largest value's half ulp. Every 16-bit pattern is also round-tripped.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "kernels/ops/elementwise.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

struct Format {
  DType dtype;
  int exp_bits, mant_bits, bias;
};
constexpr Format kBf16{DType::kBF16, 8, 7, 127};
constexpr Format kF16{DType::kF16, 5, 10, 15};

// The value of a finite pattern, from the IEEE definition.
double Decode(const Format& f, uint16_t bits) {
  const int e = (bits >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  const int m = bits & ((1 << f.mant_bits) - 1);
  const double v = e == 0 ? std::ldexp(m, 1 - f.bias - f.mant_bits)
                          : std::ldexp((1 << f.mant_bits) + m, e - f.bias - f.mant_bits);
  return (bits & 0x8000) ? -v : v;
}

struct Table {
  std::vector<double> value;  // non-negative finite values, ascending, then the overflow point
  std::vector<uint16_t> bits;
};

Table Build(const Format& f) {
  Table t;
  const uint16_t inf = static_cast<uint16_t>(((1 << f.exp_bits) - 1) << f.mant_bits);
  for (uint32_t b = 0; b < inf; ++b) {
    t.value.push_back(Decode(f, static_cast<uint16_t>(b)));
    t.bits.push_back(static_cast<uint16_t>(b));
  }
  // Rounding treats inf as the next value after the largest, 2^(emax+1) (its pattern is even).
  t.value.push_back(std::ldexp(1.0, (1 << f.exp_bits) - 1 - f.bias));
  t.bits.push_back(inf);
  return t;
}

uint16_t Expected(const Table& t, double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (a >= t.value.back()) return sign | t.bits.back();
  auto hi = std::upper_bound(t.value.begin(), t.value.end(), a) - t.value.begin();
  const size_t lo = hi - 1;
  if (t.value[lo] == a) return sign | t.bits[lo];
  const double mid = 0.5 * (t.value[lo] + t.value[hi]);  // exact: one more bit than the format
  if (a < mid) return sign | t.bits[lo];
  if (a > mid) return sign | t.bits[hi];
  return sign | ((t.bits[lo] & 1) ? t.bits[hi] : t.bits[lo]);
}

TensorView View16(std::vector<uint16_t>& v, DType dt) {
  return MakeView(v.data(), dt, DeviceKind::kCpu, {static_cast<int64_t>(v.size())});
}

template <typename T>
std::vector<uint16_t> CastTo16(Backend& be, std::vector<T>& x, DType dt) {
  std::vector<uint16_t> out(x.size());
  EXPECT_TRUE(RunOp(be, Desc(Op::kCast, DTypeOf<T>()), {View(x, {int64_t(x.size())})},
                  {View16(out, dt)})
                  .ok());
  return out;
}

// Values spread over every binade of the 16-bit format, its subnormals and its
// overflow region, plus exact midpoints (ties) and their neighbours.
std::vector<double> Probes(const Table& t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> p;
  for (size_t i = 0; i + 1 < t.value.size(); i += 7) {
    const double lo = t.value[i], hi = t.value[i + 1], mid = 0.5 * (lo + hi);
    p.insert(p.end(), {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300),
                       lo + (hi - lo) * u(rng)});
    // fp32 neighbours of the tie, for the fp32 probes.
    const float mf = static_cast<float>(mid);
    if (double(mf) == mid && std::isfinite(mf))
      p.insert(p.end(), {double(std::nextafter(mf, 0.0f)),
                         double(std::nextafter(mf, std::numeric_limits<float>::infinity()))});
  }
  p.push_back(t.value.back() * 4);
  const size_t n = p.size();
  for (size_t i = 0; i < n; ++i) p.push_back(-p[i]);
  return p;
}

class CastCpu : public ::testing::TestWithParam<Format> {};

TEST_P(CastCpu, EveryPatternRoundTripsThroughF32AndF64) {
  const Format f = GetParam();
  auto be = MakeCpu(2);
  std::vector<uint16_t> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = static_cast<uint16_t>(b);
  std::vector<float> f32(65536);
  std::vector<double> f64(65536);
  ASSERT_TRUE(RunOp(*be, Desc(Op::kCast, f.dtype), {View16(all, f.dtype)}, {View(f32, {65536})}).ok());
  ASSERT_TRUE(RunOp(*be, Desc(Op::kCast, f.dtype), {View16(all, f.dtype)}, {View(f64, {65536})}).ok());
  const uint16_t inf = static_cast<uint16_t>(((1 << f.exp_bits) - 1) << f.mant_bits);
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t mag = b & 0x7fff;
    if (mag > inf) {
      ASSERT_TRUE(std::isnan(f32[b]) && std::isnan(f64[b])) << b;
    } else if (mag == inf) {
      ASSERT_TRUE(std::isinf(f32[b]) && std::signbit(f32[b]) == bool(b & 0x8000)) << b;
    } else {
      ASSERT_EQ(double(f32[b]), Decode(f, static_cast<uint16_t>(b))) << b;
      ASSERT_EQ(f64[b], Decode(f, static_cast<uint16_t>(b))) << b;
      ASSERT_EQ(std::signbit(f32[b]), bool(b & 0x8000)) << b;
    }
  }
  auto back32 = CastTo16(*be, f32, f.dtype);
  auto back64 = CastTo16(*be, f64, f.dtype);
  for (uint32_t b = 0; b < 65536; ++b) {
    if ((b & 0x7fff) > inf) {
      ASSERT_GT(back32[b] & 0x7fff, inf) << "NaN must stay NaN";
      ASSERT_GT(back64[b] & 0x7fff, inf);
    } else {
      ASSERT_EQ(back32[b], b);
      ASSERT_EQ(back64[b], b);
    }
  }
}

TEST_P(CastCpu, RoundsToNearestEvenFromF32AndF64) {
  const Format f = GetParam();
  const Table t = Build(f);
  auto be = MakeCpu(2);
  std::vector<double> d = Probes(t, 5);
  std::vector<float> x32;
  std::vector<double> x32_exact;
  for (double v : d) {
    // fp32 probes: only values fp32 holds exactly (ties of bf16/fp16 always are).
    if (double(float(v)) == v) x32.push_back(float(v));
  }
  ASSERT_GT(x32.size(), d.size() / 3);
  auto r64 = CastTo16(*be, d, f.dtype);
  auto r32 = CastTo16(*be, x32, f.dtype);
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(r64[i], Expected(t, d[i])) << d[i];
  for (size_t i = 0; i < x32.size(); ++i) ASSERT_EQ(r32[i], Expected(t, x32[i])) << x32[i];
}

INSTANTIATE_TEST_SUITE_P(Formats, CastCpu, ::testing::Values(kBf16, kF16),
                         [](const auto& info) { return info.param.dtype == DType::kBF16 ? "bf16" : "fp16"; });

// 1 + 2^-8 + 2^-30 lies just above the bf16 midpoint between 1 and 1 + 2^-7. Going
// f64 -> f32 -> bf16 rounds twice (to the tie 1 + 2^-8, then to even 1.0); the cast
// must round once, up.
TEST(CastCpuF64, NoDoubleRounding) {
  auto be = MakeCpu(1);
  std::vector<double> x = {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30),
                           1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)};
  auto bf = CastTo16(*be, x, DType::kBF16);
  EXPECT_EQ(bf[0], 0x3f81);  // 1 + 2^-7
  auto h = CastTo16(*be, x, DType::kF16);
  EXPECT_EQ(h[1], 0x3c01);   // 1 + 2^-10
}

TEST(CastCpuF64, F32F64BothWays) {
  auto be = MakeCpu(2);
  auto d = RandomVec<double>(1000, 3, 1e3);
  d.push_back(std::numeric_limits<double>::max());
  d.push_back(-0.0);
  std::vector<float> f(d.size());
  ASSERT_TRUE(RunOp(*be, Desc(Op::kCast, DType::kF64), {View(d, {int64_t(d.size())})},
                  {View(f, {int64_t(f.size())})})
                  .ok());
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(f[i], static_cast<float>(d[i]));
  EXPECT_TRUE(std::signbit(f.back()));
  std::vector<double> back(f.size());
  ASSERT_TRUE(RunOp(*be, Desc(Op::kCast, DType::kF32), {View(f, {int64_t(f.size())})},
                  {View(back, {int64_t(back.size())})})
                  .ok());
  for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(back[i], double(f[i]));
}

TEST(CastCpuF64, StridedRowsAndErrors) {
  auto be = MakeCpu(2);
  auto x = RandomVec<float>(5 * 8, 4);
  std::vector<uint16_t> y(5 * 3, 0xffff);
  TensorView xv = Strided2D(x, 5, 3, 8);
  TensorView yv = MakeView(y.data(), DType::kBF16, DeviceKind::kCpu, {5, 3});
  ASSERT_TRUE(RunOp(*be, Desc(Op::kCast, DType::kF32), {xv}, {yv}).ok());
  const Table t = Build(kBf16);
  for (int m = 0; m < 5; ++m)
    for (int n = 0; n < 3; ++n) ASSERT_EQ(y[m * 3 + n], Expected(t, x[m * 8 + n]));
  std::vector<int32_t> ints(15);
  TensorView iv = MakeView(ints.data(), DType::kI32, DeviceKind::kCpu, {5, 3});
  EXPECT_EQ(RunOp(*be, Desc(Op::kCast, DType::kF32), {xv}, {iv}).code(),
            absl::StatusCode::kInvalidArgument);
  TensorView wrong = MakeView(y.data(), DType::kBF16, DeviceKind::kCpu, {3, 5});
  EXPECT_EQ(RunOp(*be, Desc(Op::kCast, DType::kF32), {xv}, {wrong}).code(),
            absl::StatusCode::kInvalidArgument);
  // desc.dtype must name X's dtype.
  EXPECT_EQ(RunOp(*be, Desc(Op::kCast, DType::kF64), {xv}, {yv}).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace flashtick::testing
