// The tiled CPU attention ops (kernels/cpu/attention_{fwd,bwd,decode}.cc) against the
// naive full-row reference (kernels/cpu/attention_naive.h) in fp64 and fp32, on the
// edge shapes of STYLE rule 5: T = 1, T not a multiple of the 32×64 tiles, GQA,
// D ∈ {64, 128}, causal and not, and Q/K/V read as slices of a fused [B, T, 3, H, D]
// buffer (non-trivial strides). Decode is checked against the last row of a causal
// forward, which is what serving a new tick computes.
#include "gtest/gtest.h"
#include "kernels/cpu/attention_naive.h"
#include "tests/attention/attention_test_util.h"

namespace flashtick {
namespace {

using testing_util::AttnCase;
using testing_util::HostT;

const AttnCase kCases[] = {
    {1, 1, 1, 1, 64, true},     {1, 1, 2, 1, 64, false},    {2, 37, 4, 4, 64, true},
    {1, 129, 2, 2, 128, true},  {1, 129, 2, 2, 128, false}, {2, 100, 8, 2, 64, true},
    {1, 200, 4, 1, 16, false},  {1, 64, 1, 1, 8, true},
};

std::string Name(const AttnCase& c) {
  return testing::PrintToString(std::vector<int64_t>{c.B, c.T, c.H, c.Hkv, c.D, c.causal});
}

class AttentionCpuTest : public testing::Test {
 protected:
  void SetUp() override {
    auto b = CreateBackend("cpu", {.threads = 2});
    ASSERT_TRUE(b.ok()) << b.status();
    cpu_ = std::move(*b);
  }
  std::unique_ptr<Backend> cpu_;
};

template <typename T>
void CheckForward(Backend& cpu, const AttnCase& c, double tol) {
  auto q = testing_util::Random(c.nq(), 1), k = testing_util::Random(c.nk(), 2),
       v = testing_util::Random(c.nk(), 3);
  std::vector<double> o_ref(c.nq()), l_ref(c.nstat());
  cpu::NaiveAttentionOptions opt;
  opt.causal = c.causal;
  cpu::NaiveAttentionFwd(c.shape(), opt, q.data(), k.data(), v.data(), o_ref.data(), l_ref.data());

  testing_util::FusedQkv<T> f(c, q, k, v);
  HostT<T> o(std::vector<double>(c.nq()), {c.B, c.T, c.H, c.D});
  HostT<T> l(std::vector<double>(c.nstat()), {c.B, c.H, c.T});
  const TensorView in[] = {f.View(0), f.View(1), f.View(2)};
  const TensorView out[] = {o.view, l.view};
  ASSERT_TRUE(
      cpu.Run(testing_util::AttnDesc(Op::kAttentionFwd, testing_util::DTypeOf<T>(), c.causal), in, out)
          .ok());
  EXPECT_LT(testing_util::MaxAbsDiff(o.F64(), o_ref), tol) << Name(c);
  EXPECT_LT(testing_util::MaxAbsDiff(l.F64(), l_ref), tol) << Name(c);
}

template <typename T>
void CheckBackward(Backend& cpu, const AttnCase& c, double tol) {
  const auto s = c.shape();
  auto q = testing_util::Random(c.nq(), 4), k = testing_util::Random(c.nk(), 5),
       v = testing_util::Random(c.nk(), 6), dout = testing_util::Random(c.nq(), 7);
  std::vector<double> o(c.nq()), l(c.nstat());
  cpu::NaiveAttentionOptions opt;
  opt.causal = c.causal;
  cpu::NaiveAttentionFwd(s, opt, q.data(), k.data(), v.data(), o.data(), l.data());
  std::vector<double> dq_ref(c.nq()), dk_ref(c.nk()), dv_ref(c.nk()), dvec_ref(c.nstat());
  cpu::NaiveAttentionBwd(s, opt, q.data(), k.data(), v.data(), o.data(), dout.data(),
                         dq_ref.data(), dk_ref.data(), dv_ref.data(), dvec_ref.data());

  testing_util::FusedQkv<T> f(c, q, k, v);
  HostT<T> o_t(o, {c.B, c.T, c.H, c.D}), do_t(dout, {c.B, c.T, c.H, c.D}), l_t(l, {c.B, c.H, c.T});
  HostT<T> dq(std::vector<double>(c.nq(), 7.0), {c.B, c.T, c.H, c.D});  // poisoned: must be overwritten
  HostT<T> dk(std::vector<double>(c.nk(), 7.0), {c.B, c.T, c.Hkv, c.D});
  HostT<T> dv(std::vector<double>(c.nk(), 7.0), {c.B, c.T, c.Hkv, c.D});
  HostT<T> dvec(std::vector<double>(c.nstat(), 7.0), {c.B, c.H, c.T});
  const TensorView in[] = {f.View(0), f.View(1), f.View(2), o_t.view, do_t.view, l_t.view};
  const TensorView out[] = {dq.view, dk.view, dv.view, dvec.view};
  ASSERT_TRUE(
      cpu.Run(testing_util::AttnDesc(Op::kAttentionBwd, testing_util::DTypeOf<T>(), c.causal), in, out)
          .ok());
  EXPECT_LT(testing_util::MaxAbsDiff(dq.F64(), dq_ref), tol) << Name(c);
  EXPECT_LT(testing_util::MaxAbsDiff(dk.F64(), dk_ref), tol) << Name(c);
  EXPECT_LT(testing_util::MaxAbsDiff(dv.F64(), dv_ref), tol) << Name(c);
  EXPECT_LT(testing_util::MaxAbsDiff(dvec.F64(), dvec_ref), tol) << Name(c);
}

TEST_F(AttentionCpuTest, ForwardMatchesNaiveF64) {
  for (const auto& c : kCases) CheckForward<double>(*cpu_, c, 1e-12);
}

TEST_F(AttentionCpuTest, ForwardMatchesNaiveF32) {
  for (const auto& c : kCases) CheckForward<float>(*cpu_, c, 2e-6);
}

TEST_F(AttentionCpuTest, BackwardMatchesNaiveF64) {
  for (const auto& c : kCases) CheckBackward<double>(*cpu_, c, 1e-11);
}

TEST_F(AttentionCpuTest, BackwardMatchesNaiveF32) {
  for (const auto& c : kCases) CheckBackward<float>(*cpu_, c, 2e-5);
}

// decode(q = Q[:, T−1], K, V) equals row T−1 of the causal forward.
TEST_F(AttentionCpuTest, DecodeMatchesLastCausalRow) {
  for (const AttnCase c : {AttnCase{1, 1, 2, 1, 64, true}, AttnCase{2, 300, 4, 2, 64, true},
                           AttnCase{1, 777, 2, 2, 128, true}}) {
    auto q = testing_util::Random(c.nq(), 8), k = testing_util::Random(c.nk(), 9),
         v = testing_util::Random(c.nk(), 10);
    std::vector<double> o_ref(c.nq()), l_ref(c.nstat());
    cpu::NaiveAttentionOptions opt;
    cpu::NaiveAttentionFwd(c.shape(), opt, q.data(), k.data(), v.data(), o_ref.data(), l_ref.data());
    testing_util::FusedQkv<double> f(c, q, k, v);
    TensorView qlast = f.View(0);
    qlast.data = static_cast<double*>(qlast.data) + (c.T - 1) * qlast.stride(1);
    qlast.shape[1] = 1;
    HostT<double> o(std::vector<double>(c.B * c.H * c.D), {c.B, 1, c.H, c.D});
    const TensorView in[] = {qlast, f.View(1), f.View(2)};
    const TensorView out[] = {o.view};
    ASSERT_TRUE(cpu_->Run(testing_util::AttnDesc(Op::kAttentionDecode, DType::kF64, true), in, out).ok());
    double err = 0;
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < c.H; ++h)
        for (int64_t d = 0; d < c.D; ++d)
          err = std::max(err, std::fabs(o.data[(b * c.H + h) * c.D + d] -
                                        o_ref[((b * c.T + c.T - 1) * c.H + h) * c.D + d]));
    EXPECT_LT(err, 1e-12) << Name(c);
  }
}

// Inputs that violate the contract come back as InvalidArgument, not a crash.
TEST_F(AttentionCpuTest, RejectsBadShapes) {
  std::vector<double> buf(4 * 64, 0.0), out(4 * 64), l(4);
  const TensorView q = MakeView(buf.data(), DType::kF64, DeviceKind::kCpu, {1, 4, 1, 64});
  const TensorView k = MakeView(buf.data(), DType::kF64, DeviceKind::kCpu, {1, 3, 1, 64});
  const TensorView o = MakeView(out.data(), DType::kF64, DeviceKind::kCpu, {1, 4, 1, 64});
  const TensorView lv = MakeView(l.data(), DType::kF64, DeviceKind::kCpu, {1, 1, 4});
  const TensorView in[] = {q, k, k};
  const TensorView outs[] = {o, lv};
  const auto desc = testing_util::AttnDesc(Op::kAttentionFwd, DType::kF64, true);
  EXPECT_EQ(cpu_->Run(desc, in, outs).code(), absl::StatusCode::kInvalidArgument);
  const TensorView in_ok[] = {q, q, q};
  const TensorView lv_bad = MakeView(l.data(), DType::kF64, DeviceKind::kCpu, {1, 4, 1});
  const TensorView outs_bad[] = {o, lv_bad};
  EXPECT_EQ(cpu_->Run(desc, in_ok, outs_bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(cpu_->Run(desc, in_ok, outs).ok());
}

}  // namespace
}  // namespace flashtick
