// Finite-difference check of attention backward-over-backward (STYLE rule 5b): the
// op's outputs are the gradient of f = ⟨gQ, dQ⟩ + ⟨gK, dK⟩ + ⟨gV, dV⟩, where (dQ, dK, dV)
// is the first backward of attention at (Q, K, V, dO). For a random tangent t of one
// argument X, (f(X + εt) − f(X − εt)) / 2ε must equal ⟨∂X, t⟩. The backward is the
// plain reference's; when the CPU backend's AttentionFwd/AttentionBwd ops exist, the
// same check also runs through them.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "tests/bob/bob_problem.h"

namespace flashtick::bob_test {
namespace {

using BackwardFn = std::function<absl::Status(const BobProblem&, std::vector<double>*,
                                              std::vector<double>*, std::vector<double>*)>;

absl::Status NaiveBackward(const BobProblem& p, std::vector<double>* dq, std::vector<double>* dk,
                           std::vector<double>* dv) {
  dq->resize(p.c.QSize());
  dk->resize(p.c.KvSize());
  dv->resize(p.c.KvSize());
  cpu::BobNaiveBackward(p.config(), p.q.data(), p.k.data(), p.v.data(), p.dout.data(), dq->data(),
                        dk->data(), dv->data());
  return absl::OkStatus();
}

// The CPU backend's forward then backward, in f64 (contiguous views).
absl::Status BackendBackward(Backend& be, const BobProblem& p, std::vector<double>* dq,
                             std::vector<double>* dk, std::vector<double>* dv) {
  const BobCase& c = p.c;
  std::vector<double> q = p.q, k = p.k, v = p.v, dout = p.dout;
  std::vector<double> o(c.QSize()), lse(c.StatSize()), dvec(c.StatSize());
  dq->assign(c.QSize(), 0.0);
  dk->assign(c.KvSize(), 0.0);
  dv->assign(c.KvSize(), 0.0);
  auto Q = [&](std::vector<double>& x) {
    return MakeView(x.data(), DType::kF64, DeviceKind::kCpu, {c.B, c.T, c.H, c.D});
  };
  auto KV = [&](std::vector<double>& x) {
    return MakeView(x.data(), DType::kF64, DeviceKind::kCpu, {c.B, c.T, c.Hkv, c.D});
  };
  auto S = [&](std::vector<double>& x) {
    return MakeView(x.data(), DType::kF64, DeviceKind::kCpu, {c.B, c.H, c.T});
  };
  OpDesc desc;
  desc.dtype = DType::kF64;
  desc.attention.causal = c.causal;
  desc.op = Op::kAttentionFwd;
  std::vector<TensorView> fin = {Q(q), KV(k), KV(v)}, fout = {Q(o), S(lse)};
  RETURN_IF_ERROR(be.Run(desc, fin, fout));
  desc.op = Op::kAttentionBwd;
  std::vector<TensorView> bin = {Q(q), KV(k), KV(v), Q(o), Q(dout), S(lse)};
  std::vector<TensorView> bout = {Q(*dq), KV(*dk), KV(*dv), S(dvec)};
  return be.Run(desc, bin, bout);
}

absl::StatusOr<double> Objective(const BackwardFn& bwd, const BobProblem& p) {
  std::vector<double> dq, dk, dv;
  RETURN_IF_ERROR(bwd(p, &dq, &dk, &dv));
  double f = 0.0;
  for (size_t i = 0; i < dq.size(); ++i) f += p.gq[i] * dq[i];
  for (size_t i = 0; i < dk.size(); ++i) f += p.gk[i] * dk[i] + p.gv[i] * dv[i];
  return f;
}

// Checks every argument of the op (Q, K, V, dO) along its own random tangent.
void CheckAgainstFiniteDifferences(const BackwardFn& bwd, const BobCase& c, const char* label) {
  auto cpu = CreateBackend("cpu", BackendOptions{2, 0});
  ASSERT_TRUE(cpu.ok());
  const BobProblem p = BobProblem::Random(c, 23);
  auto out = RunCpuOp(**cpu, p, DType::kF64, false);
  ASSERT_TRUE(out.ok()) << out.status();
  const char* names[] = {"Q", "K", "V", "dO"};
  const std::vector<double>* grads[] = {&out->ddq, &out->ddk, &out->ddv, &out->dddo};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  constexpr double kEps = 1e-5;  // central differences: O(ε²) truncation ≈ 1e-10
  for (int arg = 0; arg < 4; ++arg) {
    std::vector<double> t(grads[arg]->size());
    for (double& x : t) x = normal(rng);
    auto perturbed = [&](double sign) {
      BobProblem x = p;
      std::vector<double>* xs[] = {&x.q, &x.k, &x.v, &x.dout};
      for (size_t i = 0; i < t.size(); ++i) (*xs[arg])[i] += sign * kEps * t[i];
      return Objective(bwd, x);
    };
    auto fp = perturbed(+1.0), fm = perturbed(-1.0);
    ASSERT_TRUE(fp.ok() && fm.ok()) << fp.status() << fm.status();
    const double fd = (*fp - *fm) / (2 * kEps);
    double analytic = 0.0, norm = 0.0;
    for (size_t i = 0; i < t.size(); ++i) {
      analytic += (*grads[arg])[i] * t[i];
      norm += std::abs((*grads[arg])[i] * t[i]);
    }
    EXPECT_NEAR(fd, analytic, 1e-7 * (norm + 1.0))
        << label << " " << c.Name() << " d/d" << names[arg];
    std::cout << "bwd_bwd_fd(" << label << "," << c.Name() << ",d" << names[arg] << "): fd=" << fd
              << " analytic=" << analytic << "\n";
  }
}

std::vector<BobCase> FdCases() {
  return {{1, 9, 2, 1, 8, true}, {1, 37, 4, 2, 16, true}, {2, 13, 2, 2, 8, false}};
}

TEST(BobFiniteDifferences, OfThePlainBackward) {
  for (const BobCase& c : FdCases()) CheckAgainstFiniteDifferences(NaiveBackward, c, "naive_bwd");
}

TEST(BobFiniteDifferences, OfTheCpuBackendBackward) {
  auto cpu = CreateBackend("cpu", BackendOptions{2, 0});
  ASSERT_TRUE(cpu.ok());
  Backend& be = **cpu;
  std::vector<double> dq, dk, dv;
  const absl::Status probe =
      BackendBackward(be, BobProblem::Random(FdCases()[0], 1), &dq, &dk, &dv);
  if (absl::IsUnimplemented(probe))
    GTEST_SKIP() << "the CPU AttentionFwd/AttentionBwd ops have not landed: " << probe;
  ASSERT_TRUE(probe.ok()) << probe;
  BackwardFn bwd = [&be](const BobProblem& p, std::vector<double>* a, std::vector<double>* b,
                         std::vector<double>* c) { return BackendBackward(be, p, a, b, c); };
  for (const BobCase& c : FdCases()) CheckAgainstFiniteDifferences(bwd, c, "cpu_backend_bwd");
}

}  // namespace
}  // namespace flashtick::bob_test
