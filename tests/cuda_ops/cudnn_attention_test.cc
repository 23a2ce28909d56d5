// cuDNN's fused attention (kernels/cuda/attention/cudnn_sdpa.cc) through the flash_cuda
// backend, against the CPU fp64 reference and against our Flash kernels:
//   - forward O and L (natural-log LSE, [B, H, T]) and backward dQ, dK, dV, Dvec, for
//     bf16/fp16, d = 64/128, causal and not, MHA and GQA;
//   - the two implementations mixed: our backward on cuDNN's forward and cuDNN's
//     backward on ours (the LSE contract they share);
//   - our backward-over-backward on cuDNN's forward (O, L) and backward's Dvec.
// The implementation is forced with SetAttentionImplOverride, and every run checks the
// backend's kernel path, so a silent fallback to ours fails the test rather than
// passing it. Skips without a GPU, and without a cuDNN build (said in the message).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kernels/attention_dispatch.h"
#include "tests/cuda_ops/gpu_test_util.h"

namespace flashtick::testing_gpu {
namespace {

struct Case {
  DType dt;
  int64_t B, T, H, Hkv, D;
  bool causal;
  std::string Name() const {
    return absl::StrCat(DTypeName(dt), "_B", B, "_T", T, "_H", H, "_Hkv", Hkv, "_d", D,
                        causal ? "_causal" : "_full");
  }
};

// ‖a − b‖₂ / ‖b‖₂ (b the reference).
double RelErr(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

double MaxAbsErr(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

class CudnnAttentionTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SetAttentionImplOverride(AttentionImpl::kCudnn);
    OpDesc d;
    d.op = Op::kAttentionFwd;
    d.dtype = DType::kBF16;
    d.attention.head_dim = 64;
    const std::string path = gpu().KernelPath(d);
    if (!absl::StartsWith(path, "cudnn_sdpa") || absl::StrContains(path, "unavailable")) {
      SetAttentionImplOverride(std::nullopt);
      GTEST_SKIP() << "SKIP cudnn attention test: this build has no cuDNN backend (kernel path "
                   << path << "; see docs/kernels/cudnn.md)";
    }
  }
  void TearDown() override { SetAttentionImplOverride(std::nullopt); }

  // Runs `op` with the implementation forced to `impl` and checks which one ran.
  void Run(AttentionImpl impl, Op op, const Case& c, std::vector<TensorView> in,
           std::vector<TensorView> out) {
    SetAttentionImplOverride(impl);
    OpDesc d;
    d.op = op;
    d.dtype = c.dt;
    d.attention.causal = c.causal;
    d.attention.head_dim = static_cast<int>(c.D);
    const absl::Status s = gpu().Run(d, in, out);
    ASSERT_TRUE(s.ok()) << c.Name() << " " << OpName(op) << ": " << s;
    ASSERT_TRUE(gpu().Synchronize().ok());
    const std::string path = gpu().KernelPath(d);
    if (op == Op::kAttentionFwd || op == Op::kAttentionBwd) {
      const char* want = impl == AttentionImpl::kCudnn ? "cudnn_sdpa" : "flash_cuda";
      EXPECT_TRUE(absl::StartsWith(path, want)) << c.Name() << " " << OpName(op) << " ran " << path;
    }
  }

  // CPU fp64 reference op.
  void RunCpu(Op op, const Case& c, std::vector<TensorView> in, std::vector<TensorView> out) {
    OpDesc d;
    d.op = op;
    d.dtype = DType::kF64;
    d.attention.causal = c.causal;
    d.attention.head_dim = static_cast<int>(c.D);
    const absl::Status s = cpu().Run(d, in, out);
    ASSERT_TRUE(s.ok()) << c.Name() << " cpu " << OpName(op) << ": " << s;
  }
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (DType dt : {DType::kBF16, DType::kF16})
    for (int64_t D : {64, 128})
      for (bool causal : {true, false}) {
        cases.push_back({dt, 2, 256, 4, 4, D, causal});  // MHA, whole tiles
        cases.push_back({dt, 1, 333, 4, 2, D, causal});  // GQA group 2, a ragged last tile
      }
  return cases;
}

// bf16 keeps 8 significant bits, fp16 11: relative L2 error bounds for outputs that are
// rounded once (O, dQ, dK, dV), and an absolute bound for the fp32 statistics.
double Tol(DType dt) { return dt == DType::kBF16 ? 2e-2 : 4e-3; }
constexpr double kStatTol = 2e-3;

TEST_F(CudnnAttentionTest, ForwardBackwardMatchCpuAndOurs) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.Name());
    const std::vector<int64_t> qs = {c.B, c.T, c.H, c.D}, ks = {c.B, c.T, c.Hkv, c.D},
                               ls = {c.B, c.H, c.T};
    const auto q = Uniform(Numel(qs), 1), k = Uniform(Numel(ks), 2), v = Uniform(Numel(ks), 3),
               dout = Uniform(Numel(qs), 4);
    // CPU fp64 reference.
    Tensor cq = Place(cpu(), DType::kF64, qs, q), ck = Place(cpu(), DType::kF64, ks, k),
           cv = Place(cpu(), DType::kF64, ks, v), cdo = Place(cpu(), DType::kF64, qs, dout);
    Tensor co = Empty(cpu(), DType::kF64, qs), cl = Empty(cpu(), DType::kF64, ls);
    RunCpu(Op::kAttentionFwd, c, {cq.view, ck.view, cv.view}, {co.view, cl.view});
    Tensor cdq = Empty(cpu(), DType::kF64, qs), cdk = Empty(cpu(), DType::kF64, ks),
           cdv = Empty(cpu(), DType::kF64, ks), cdvec = Empty(cpu(), DType::kF64, ls);
    RunCpu(Op::kAttentionBwd, c, {cq.view, ck.view, cv.view, co.view, cdo.view, cl.view},
           {cdq.view, cdk.view, cdv.view, cdvec.view});
    if (HasFatalFailure()) return;
    const auto ref_o = Fetch(cpu(), co), ref_l = Fetch(cpu(), cl), ref_dq = Fetch(cpu(), cdq),
               ref_dk = Fetch(cpu(), cdk), ref_dv = Fetch(cpu(), cdv), ref_dvec = Fetch(cpu(), cdvec);

    Tensor gq = Place(gpu(), c.dt, qs, q), gk = Place(gpu(), c.dt, ks, k), gv = Place(gpu(), c.dt, ks, v),
           gdo = Place(gpu(), c.dt, qs, dout);
    // Forward by each implementation.
    Tensor o_cudnn = Empty(gpu(), c.dt, qs), l_cudnn = Empty(gpu(), DType::kF32, ls);
    Tensor o_ours = Empty(gpu(), c.dt, qs), l_ours = Empty(gpu(), DType::kF32, ls);
    Run(AttentionImpl::kCudnn, Op::kAttentionFwd, c, {gq.view, gk.view, gv.view}, {o_cudnn.view, l_cudnn.view});
    Run(AttentionImpl::kFlash, Op::kAttentionFwd, c, {gq.view, gk.view, gv.view}, {o_ours.view, l_ours.view});
    if (HasFatalFailure()) return;
    EXPECT_LT(RelErr(Fetch(gpu(), o_cudnn), ref_o), Tol(c.dt)) << "cudnn O vs cpu";
    EXPECT_LT(MaxAbsErr(Fetch(gpu(), l_cudnn), ref_l), kStatTol) << "cudnn L vs cpu (natural-log LSE)";
    EXPECT_LT(MaxAbsErr(Fetch(gpu(), l_cudnn), Fetch(gpu(), l_ours)), kStatTol) << "cudnn L vs ours";
    EXPECT_LT(RelErr(Fetch(gpu(), o_ours), ref_o), Tol(c.dt)) << "ours O vs cpu";

    // Backward: cuDNN on its own forward, cuDNN on ours, ours on cuDNN's.
    struct Combo {
      const char* name;
      AttentionImpl bwd;
      Tensor* o;
      Tensor* l;
    };
    for (const Combo& combo : {Combo{"cudnn_bwd(cudnn_fwd)", AttentionImpl::kCudnn, &o_cudnn, &l_cudnn},
                               Combo{"cudnn_bwd(ours_fwd)", AttentionImpl::kCudnn, &o_ours, &l_ours},
                               Combo{"ours_bwd(cudnn_fwd)", AttentionImpl::kFlash, &o_cudnn, &l_cudnn}}) {
      SCOPED_TRACE(combo.name);
      Tensor dq = Empty(gpu(), c.dt, qs), dk = Empty(gpu(), c.dt, ks), dv = Empty(gpu(), c.dt, ks),
             dvec = Empty(gpu(), DType::kF32, ls);
      Run(combo.bwd, Op::kAttentionBwd, c, {gq.view, gk.view, gv.view, combo.o->view, gdo.view, combo.l->view},
          {dq.view, dk.view, dv.view, dvec.view});
      if (HasFatalFailure()) return;
      EXPECT_LT(RelErr(Fetch(gpu(), dq), ref_dq), 2 * Tol(c.dt)) << "dQ";
      EXPECT_LT(RelErr(Fetch(gpu(), dk), ref_dk), 2 * Tol(c.dt)) << "dK";
      EXPECT_LT(RelErr(Fetch(gpu(), dv), ref_dv), 2 * Tol(c.dt)) << "dV";
      EXPECT_LT(RelErr(Fetch(gpu(), dvec), ref_dvec), 2 * Tol(c.dt)) << "Dvec";
    }
  }
}

// A server meets a new sequence length with nearly every request, and each new (B, T)
// is a new cuDNN graph (cudnn_sdpa.cc). Every length must match ours, forward and
// backward; the first and second call's times are printed, the first including the
// graph's build (docs/kernels/cudnn.md, "New lengths").
TEST_F(CudnnAttentionTest, NewLengthsMatchOursAndPrintBuildTimes) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  for (int64_t T : {1000, 1100, 1237, 2048, 3001, 4097, 23400, 23399}) {
    const Case c{DType::kBF16, T > 4096 ? 1 : 2, T, 4, 4, 64, true};
    SCOPED_TRACE(c.Name());
    const std::vector<int64_t> qs = {c.B, c.T, c.H, c.D}, ls = {c.B, c.H, c.T};
    const auto q = Uniform(Numel(qs), 11), k = Uniform(Numel(qs), 12), v = Uniform(Numel(qs), 13),
               dout = Uniform(Numel(qs), 14);
    Tensor gq = Place(gpu(), c.dt, qs, q), gk = Place(gpu(), c.dt, qs, k), gv = Place(gpu(), c.dt, qs, v),
           gdo = Place(gpu(), c.dt, qs, dout);
    Tensor o_cudnn = Empty(gpu(), c.dt, qs), l_cudnn = Empty(gpu(), DType::kF32, ls);
    Tensor o_ours = Empty(gpu(), c.dt, qs), l_ours = Empty(gpu(), DType::kF32, ls);
    const auto t0 = Clock::now();
    Run(AttentionImpl::kCudnn, Op::kAttentionFwd, c, {gq.view, gk.view, gv.view}, {o_cudnn.view, l_cudnn.view});
    const auto t1 = Clock::now();
    Run(AttentionImpl::kCudnn, Op::kAttentionFwd, c, {gq.view, gk.view, gv.view}, {o_cudnn.view, l_cudnn.view});
    const auto t2 = Clock::now();
    Run(AttentionImpl::kFlash, Op::kAttentionFwd, c, {gq.view, gk.view, gv.view}, {o_ours.view, l_ours.view});
    if (HasFatalFailure()) return;
    const auto ours_o = Fetch(gpu(), o_ours);
    EXPECT_LT(RelErr(Fetch(gpu(), o_cudnn), ours_o), Tol(c.dt)) << "cudnn O vs ours";
    EXPECT_LT(MaxAbsErr(Fetch(gpu(), l_cudnn), Fetch(gpu(), l_ours)), kStatTol) << "cudnn L vs ours";
    Tensor dq = Empty(gpu(), c.dt, qs), dk = Empty(gpu(), c.dt, qs), dv = Empty(gpu(), c.dt, qs),
           dvec = Empty(gpu(), DType::kF32, ls);
    Tensor dq2 = Empty(gpu(), c.dt, qs), dk2 = Empty(gpu(), c.dt, qs), dv2 = Empty(gpu(), c.dt, qs),
           dvec2 = Empty(gpu(), DType::kF32, ls);
    const auto t3 = Clock::now();
    Run(AttentionImpl::kCudnn, Op::kAttentionBwd, c, {gq.view, gk.view, gv.view, o_ours.view, gdo.view, l_ours.view},
        {dq.view, dk.view, dv.view, dvec.view});
    const auto t4 = Clock::now();
    Run(AttentionImpl::kFlash, Op::kAttentionBwd, c, {gq.view, gk.view, gv.view, o_ours.view, gdo.view, l_ours.view},
        {dq2.view, dk2.view, dv2.view, dvec2.view});
    if (HasFatalFailure()) return;
    EXPECT_LT(RelErr(Fetch(gpu(), dq), Fetch(gpu(), dq2)), 2 * Tol(c.dt)) << "dQ";
    EXPECT_LT(RelErr(Fetch(gpu(), dk), Fetch(gpu(), dk2)), 2 * Tol(c.dt)) << "dK";
    EXPECT_LT(RelErr(Fetch(gpu(), dv), Fetch(gpu(), dv2)), 2 * Tol(c.dt)) << "dV";
    std::printf("cudnn new length B=%lld T=%lld: fwd first call %.2f ms, second %.3f ms; "
                "bwd first call %.2f ms\n",
                static_cast<long long>(c.B), static_cast<long long>(T), ms(t0, t1), ms(t1, t2), ms(t3, t4));
  }
}

// Our backward-over-backward takes (O, L) from cuDNN's forward and Dvec from cuDNN's
// backward, and matches the CPU fp64 backward-over-backward.
TEST_F(CudnnAttentionTest, OurBackwardOverBackwardAcceptsCudnnForward) {
  for (const Case& c : {Case{DType::kBF16, 1, 256, 4, 2, 64, true}, Case{DType::kBF16, 1, 200, 2, 2, 128, true},
                        Case{DType::kF16, 2, 128, 2, 1, 64, false}}) {
    SCOPED_TRACE(c.Name());
    const std::vector<int64_t> qs = {c.B, c.T, c.H, c.D}, ks = {c.B, c.T, c.Hkv, c.D},
                               ls = {c.B, c.H, c.T};
    const auto q = Uniform(Numel(qs), 11), k = Uniform(Numel(ks), 12), v = Uniform(Numel(ks), 13),
               dout = Uniform(Numel(qs), 14), g_q = Uniform(Numel(qs), 15), g_k = Uniform(Numel(ks), 16),
               g_v = Uniform(Numel(ks), 17);
    // CPU fp64: forward, backward (for Dvec), backward-over-backward.
    auto P = [&](const std::vector<int64_t>& s, const std::vector<double>& x) { return Place(cpu(), DType::kF64, s, x); };
    Tensor cq = P(qs, q), ck = P(ks, k), cv = P(ks, v), cdo = P(qs, dout), cgq = P(qs, g_q), cgk = P(ks, g_k),
           cgv = P(ks, g_v);
    Tensor co = Empty(cpu(), DType::kF64, qs), cl = Empty(cpu(), DType::kF64, ls);
    RunCpu(Op::kAttentionFwd, c, {cq.view, ck.view, cv.view}, {co.view, cl.view});
    Tensor cdq = Empty(cpu(), DType::kF64, qs), cdk = Empty(cpu(), DType::kF64, ks),
           cdv = Empty(cpu(), DType::kF64, ks), cdvec = Empty(cpu(), DType::kF64, ls);
    RunCpu(Op::kAttentionBwd, c, {cq.view, ck.view, cv.view, co.view, cdo.view, cl.view},
           {cdq.view, cdk.view, cdv.view, cdvec.view});
    Tensor rq = Empty(cpu(), DType::kF64, qs), rk = Empty(cpu(), DType::kF64, ks), rv = Empty(cpu(), DType::kF64, ks),
           rdo = Empty(cpu(), DType::kF64, qs);
    RunCpu(Op::kAttentionBwdBwd, c,
           {cq.view, ck.view, cv.view, co.view, cdo.view, cl.view, cdvec.view, cgq.view, cgk.view, cgv.view},
           {rq.view, rk.view, rv.view, rdo.view});
    if (HasFatalFailure()) return;

    auto G = [&](const std::vector<int64_t>& s, const std::vector<double>& x) { return Place(gpu(), c.dt, s, x); };
    Tensor gq = G(qs, q), gk = G(ks, k), gv = G(ks, v), gdo = G(qs, dout), ggq = G(qs, g_q), ggk = G(ks, g_k),
           ggv = G(ks, g_v);
    Tensor o = Empty(gpu(), c.dt, qs), l = Empty(gpu(), DType::kF32, ls);
    Run(AttentionImpl::kCudnn, Op::kAttentionFwd, c, {gq.view, gk.view, gv.view}, {o.view, l.view});
    Tensor dq = Empty(gpu(), c.dt, qs), dk = Empty(gpu(), c.dt, ks), dv = Empty(gpu(), c.dt, ks),
           dvec = Empty(gpu(), DType::kF32, ls);
    Run(AttentionImpl::kCudnn, Op::kAttentionBwd, c, {gq.view, gk.view, gv.view, o.view, gdo.view, l.view},
        {dq.view, dk.view, dv.view, dvec.view});
    Tensor bq = Empty(gpu(), c.dt, qs), bk = Empty(gpu(), c.dt, ks), bv = Empty(gpu(), c.dt, ks),
           bdo = Empty(gpu(), c.dt, qs);
    Run(AttentionImpl::kCudnn, Op::kAttentionBwdBwd, c,
        {gq.view, gk.view, gv.view, o.view, gdo.view, l.view, dvec.view, ggq.view, ggk.view, ggv.view},
        {bq.view, bk.view, bv.view, bdo.view});
    if (HasFatalFailure()) return;
    EXPECT_TRUE(absl::StartsWith(
        [&] {
          OpDesc d;
          d.op = Op::kAttentionBwdBwd;
          d.dtype = c.dt;
          d.attention.head_dim = static_cast<int>(c.D);
          return gpu().KernelPath(d);
        }(),
        "flash_cuda_bwd_bwd"));
    // The backward-over-backward compounds two rounded inputs (O and the gradients):
    // looser than one op.
    const double tol = 3 * Tol(c.dt);
    EXPECT_LT(RelErr(Fetch(gpu(), bq), Fetch(cpu(), rq)), tol) << "∂Q";
    EXPECT_LT(RelErr(Fetch(gpu(), bk), Fetch(cpu(), rk)), tol) << "∂K";
    EXPECT_LT(RelErr(Fetch(gpu(), bv), Fetch(cpu(), rv)), tol) << "∂V";
    EXPECT_LT(RelErr(Fetch(gpu(), bdo), Fetch(cpu(), rdo)), tol) << "∂dO";
  }
}

// Auto on a fresh cache file measures a bucket once, runs the winner, and records it.
TEST_F(CudnnAttentionTest, AutoPicksAndReportsAnImplementation) {
  const Case c{DType::kBF16, 1, 1024, 8, 8, 64, true};
  const std::vector<int64_t> qs = {c.B, c.T, c.H, c.D}, ls = {c.B, c.H, c.T};
  Tensor gq = Place(gpu(), c.dt, qs, Uniform(Numel(qs), 21)), gk = Place(gpu(), c.dt, qs, Uniform(Numel(qs), 22)),
         gv = Place(gpu(), c.dt, qs, Uniform(Numel(qs), 23));
  Tensor o = Empty(gpu(), c.dt, qs), l = Empty(gpu(), DType::kF32, ls);
  SetAttentionImplOverride(AttentionImpl::kAuto);
  OpDesc d;
  d.op = Op::kAttentionFwd;
  d.dtype = c.dt;
  d.attention.causal = true;
  d.attention.head_dim = 64;
  ASSERT_TRUE(gpu().Run(d, {gq.view, gk.view, gv.view}, {o.view, l.view}).ok());
  ASSERT_TRUE(gpu().Synchronize().ok());
  const std::string path = gpu().KernelPath(d);
  EXPECT_TRUE(absl::StartsWith(path, "cudnn_sdpa") || absl::StartsWith(path, "flash_cuda")) << path;
  std::printf("auto chose %s for %s\n", path.c_str(), c.Name().c_str());
}

// BackendOptions::deterministic: the backward runs cuDNN's deterministic engine (kernel
// path ..._det), two runs on the same inputs give the same bytes of dQ, dK, dV and
// Dvec, the result agrees with the default backend's, and a mode that asks for our
// kernels only (whose dQ is added with atomics) is refused, not run.
TEST_F(CudnnAttentionTest, DeterministicBackwardRepeatsBitForBitOrRefuses) {
  BackendOptions bo;
  bo.deterministic = true;
  auto made = CreateBackend("cuda", bo);
  ASSERT_TRUE(made.ok()) << made.status();
  Backend& det = **made;
  // Many key blocks per query block, so an atomic dQ would have an order to vary.
  const Case c{DType::kBF16, 2, 1536, 4, 2, 64, true};
  const std::vector<int64_t> qs = {c.B, c.T, c.H, c.D}, ks = {c.B, c.T, c.Hkv, c.D}, ls = {c.B, c.H, c.T};
  const auto q = Uniform(Numel(qs), 31), k = Uniform(Numel(ks), 32), v = Uniform(Numel(ks), 33),
             dout = Uniform(Numel(qs), 34);
  Tensor gq = Place(det, c.dt, qs, q), gk = Place(det, c.dt, ks, k), gv = Place(det, c.dt, ks, v),
         gdo = Place(det, c.dt, qs, dout);
  Tensor o = Empty(det, c.dt, qs), l = Empty(det, DType::kF32, ls);
  OpDesc fwd;
  fwd.op = Op::kAttentionFwd;
  fwd.dtype = c.dt;
  fwd.attention.causal = true;
  fwd.attention.head_dim = 64;
  SetAttentionImplOverride(AttentionImpl::kAuto);
  ASSERT_TRUE(det.Run(fwd, {gq.view, gk.view, gv.view}, {o.view, l.view}).ok());
  OpDesc bwd = fwd;
  bwd.op = Op::kAttentionBwd;
  auto backward = [&](Backend& b, const Tensor& bq, const Tensor& bk, const Tensor& bv, const Tensor& bo_,
                      const Tensor& bdo, const Tensor& bl) {
    std::vector<Tensor> g;
    g.push_back(Empty(b, c.dt, qs));
    g.push_back(Empty(b, c.dt, ks));
    g.push_back(Empty(b, c.dt, ks));
    g.push_back(Empty(b, DType::kF32, ls));
    const absl::Status st = b.Run(bwd, {bq.view, bk.view, bv.view, bo_.view, bdo.view, bl.view},
                                  {g[0].view, g[1].view, g[2].view, g[3].view});
    EXPECT_TRUE(st.ok()) << st;
    EXPECT_TRUE(b.Synchronize().ok());
    return g;
  };
  const std::vector<Tensor> first = backward(det, gq, gk, gv, o, gdo, l);
  const std::vector<Tensor> second = backward(det, gq, gk, gv, o, gdo, l);
  if (HasFailure()) return;
  const std::string path = det.KernelPath(bwd);
  EXPECT_TRUE(absl::StartsWith(path, "cudnn_sdpa_bwd") && absl::EndsWith(path, "_det")) << path;
  const char* names[] = {"dQ", "dK", "dV", "Dvec"};
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(FetchBytes(det, first[i]) == FetchBytes(det, second[i])) << names[i] << " differs between runs";

  // The same numbers as the default backend, to the usual tolerance.
  Tensor dq_q = Place(gpu(), c.dt, qs, q), dq_k = Place(gpu(), c.dt, ks, k), dq_v = Place(gpu(), c.dt, ks, v),
         dq_do = Place(gpu(), c.dt, qs, dout);
  Tensor d_o = Empty(gpu(), c.dt, qs), d_l = Empty(gpu(), DType::kF32, ls);
  ASSERT_TRUE(gpu().Run(fwd, {dq_q.view, dq_k.view, dq_v.view}, {d_o.view, d_l.view}).ok());
  const std::vector<Tensor> plain = backward(gpu(), dq_q, dq_k, dq_v, d_o, dq_do, d_l);
  if (HasFailure()) return;
  for (int i = 0; i < 3; ++i)
    EXPECT_LT(RelErr(Fetch(det, first[i]), Fetch(gpu(), plain[i])), 2 * Tol(c.dt)) << names[i] << " vs default";

  // Our kernels only: refused with the reason.
  SetAttentionImplOverride(AttentionImpl::kFlash);
  Tensor rq = Empty(det, c.dt, qs), rk = Empty(det, c.dt, ks), rv = Empty(det, c.dt, ks),
         rvec = Empty(det, DType::kF32, ls);
  const absl::Status refused = det.Run(bwd, {gq.view, gk.view, gv.view, o.view, gdo.view, l.view},
                                       {rq.view, rk.view, rv.view, rvec.view});
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "atomics")) << refused;
}

}  // namespace
}  // namespace flashtick::testing_gpu
