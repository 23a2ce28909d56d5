// Hutchinson's ops on the CPU reference (kernels/ops/hutchinson.h): Philox4x32-10
// against Random123's known answers, the Rademacher probe's contract (±1, element i a
// function of (seed, i) alone, balanced, independent of the thread count), the probe
// product against the loop it defines, and the errors for bad arguments.
#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"
#include "kernels/common/philox.h"
#include "kernels/ops/hutchinson.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

// Random123's tests/kat_vectors, the three philox4x32 10 lines (counter, key, result).
TEST(Philox, MatchesRandom123KnownAnswers) {
  struct Kat {
    Philox4x32 counter;
    uint32_t k0, k1;
    Philox4x32 want;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, 0xffffffff, 0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}}};
  for (const Kat& k : kats) {
    const Philox4x32 got = Philox4x32_10(k.counter, k.k0, k.k1);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got.v[j], k.want.v[j]) << "word " << j;
  }
}

template <typename T>
std::vector<T> Draw(int threads, uint64_t seed, int64_t n) {
  auto be = MakeCpu(threads);
  std::vector<T> u(n, T(0));
  OpDesc d = Desc(Op::kRademacher, DTypeOf<T>());
  d.probe.seed = seed;
  const absl::Status s = RunOp(*be, d, {}, {View(u, {n})});
  EXPECT_TRUE(s.ok()) << s;
  return u;
}

TEST(RademacherCpu, SignsFromSeedAndIndexAlone) {
  const int64_t n = 200003;  // not a multiple of 128: a partial last block
  const uint64_t seed = 0x9E3779B97F4A7C15ull;
  const auto u = Draw<float>(1, seed, n);
  EXPECT_EQ(Draw<float>(3, seed, n), u);  // thread count does not matter
  const auto u64 = Draw<double>(2, seed, n);
  int64_t plus = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(u[i] == 1.0f || u[i] == -1.0f) << i;
    ASSERT_EQ(double(u[i]), u64[i]) << i;  // same bits in either dtype
    ASSERT_EQ(u[i] > 0, RademacherPositive(seed, i)) << i;
    plus += u[i] > 0;
  }
  // Balanced: |#(+1) − n/2| within 5σ of a fair coin (σ = √n / 2).
  EXPECT_LT(std::fabs(double(plus) - n / 2.0), 5 * std::sqrt(double(n)) / 2);
  // A prefix is the same draw: element i does not depend on n.
  const auto head = Draw<float>(2, seed, 300);
  for (int64_t i = 0; i < 300; ++i) ASSERT_EQ(head[i], u[i]) << i;
  // Another seed is another vector (agreeing on about half the signs).
  const auto other = Draw<float>(2, seed + 1, n);
  int64_t same = 0;
  for (int64_t i = 0; i < n; ++i) same += other[i] == u[i];
  EXPECT_LT(std::fabs(double(same) - n / 2.0), 5 * std::sqrt(double(n)) / 2);
}

template <typename T>
void CheckProbeProduct(double alpha, double beta, bool in_place) {
  auto be = MakeCpu(2);
  const int64_t n = 40001;
  auto u = RandomVec<T>(n, 1), hv = RandomVec<T>(n, 2), a = RandomVec<T>(n, 3);
  const auto hv0 = hv;
  std::vector<T> y(n, T(0));
  OpDesc d = Desc(Op::kProbeProduct, DTypeOf<T>());
  d.probe.alpha = alpha;
  d.probe.beta = beta;
  TensorView av = View(a, {n});
  if (beta == 0.0) av.data = nullptr;  // not read: may be absent
  TensorView yv = in_place ? View(hv, {n}) : View(y, {n});
  ASSERT_TRUE(RunOp(*be, d, {View(u, {n}), View(hv, {n}), av}, {yv}).ok());
  const auto& out = in_place ? hv : y;
  const T ta = static_cast<T>(alpha), tb = static_cast<T>(beta);
  for (int64_t i = 0; i < n; ++i) {
    const T p = u[i] * hv0[i];
    ASSERT_EQ(out[i], ta * (beta != 0.0 ? tb * a[i] + p : p)) << i;
  }
}

TEST(ProbeProductCpu, MatchesLoop) {
  for (bool ip : {false, true}) {
    CheckProbeProduct<float>(0.5, 0.0, ip);
    CheckProbeProduct<float>(1.0, 1.0, ip);
    CheckProbeProduct<double>(0.125, 1.0, ip);
  }
}

TEST(HutchinsonOpsCpu, BadArgumentsAreInvalid) {
  auto be = MakeCpu(1);
  std::vector<float> u(8), hv(8), a(8), short_a(4);
  std::vector<double> wide(8);
  OpDesc r = Desc(Op::kRademacher, DType::kF32);  // an fp64 buffer under an fp32 desc
  EXPECT_EQ(RunOp(*be, r, {}, {View(wide, {8})}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunOp(*be, r, {View(u, {8})}, {View(hv, {8})}).code(),
            absl::StatusCode::kInvalidArgument);  // no inputs
  OpDesc p = Desc(Op::kProbeProduct, DType::kF32);
  p.probe.beta = 1.0;
  // A shorter accumulator, a missing one while β ≠ 0, Y over U, arity.
  EXPECT_EQ(RunOp(*be, p, {View(u, {8}), View(hv, {8}), View(short_a, {4})}, {View(hv, {8})}).code(),
            absl::StatusCode::kInvalidArgument);
  TensorView none = View(a, {8});
  none.data = nullptr;
  EXPECT_EQ(RunOp(*be, p, {View(u, {8}), View(hv, {8}), none}, {View(hv, {8})}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunOp(*be, p, {View(u, {8}), View(hv, {8}), View(a, {8})}, {View(u, {8})}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunOp(*be, p, {View(u, {8}), View(hv, {8})}, {View(hv, {8})}).code(),
            absl::StatusCode::kInvalidArgument);
  p.probe.alpha = std::nan("");
  EXPECT_EQ(RunOp(*be, p, {View(u, {8}), View(hv, {8}), View(a, {8})}, {View(hv, {8})}).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace flashtick::testing
