// CPU reference of attention backward-over-backward (kernels/cpu/attention_bwd_bwd.cc)
// against the plain full-row reference (kernels/cpu/attention_bwd_bwd_naive.cc): tile
// edges (T around 32 and 64), causal and not, GQA, B > 1, f64 and f32, strided views,
// thread-count independence, and the argument checks. The JAX oracle and finite
// differences are in bob_oracle_test.cc and bob_fd_test.cc.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "tests/bob/bob_problem.h"

namespace flashtick::bob_test {
namespace {

std::unique_ptr<Backend> Cpu(int threads = 2) {
  auto b = CreateBackend("cpu", BackendOptions{threads, 0});
  EXPECT_TRUE(b.ok()) << b.status();
  return std::move(b).value();
}

std::vector<BobCase> TileEdgeCases() {
  std::vector<BobCase> cases;
  for (int64_t T : {1, 2, 31, 33, 64, 65, 100})
    for (bool causal : {true, false}) cases.push_back({1, T, 4, 2, 16, causal});
  cases.push_back({2, 37, 3, 1, 8, true});    // B > 1, three query heads on one K/V head
  cases.push_back({1, 70, 2, 2, 64, false});  // D = 64, no GQA
  cases.push_back({2, 130, 2, 1, 64, true});  // several row and key tiles, GQA
  return cases;
}

TEST(BobCpu, TiledMatchesNaiveF64) {
  auto cpu = Cpu();
  for (const BobCase& c : TileEdgeCases()) {
    BobProblem p = BobProblem::Random(c, 17);
    BobOutputs want = RunNaive(p);
    auto got = RunCpuOp(*cpu, p, DType::kF64, /*strided=*/false);
    ASSERT_TRUE(got.ok()) << c.Name() << ": " << got.status();
    ASSERT_TRUE(AllFinite(*got)) << c.Name();
    std::string which;
    const double err = WorstRelL2(*got, want, &which);
    EXPECT_LT(err, 1e-12) << c.Name() << ": " << which;
    std::cout << "attention_bwd_bwd_cpu_vs_naive(" << c.Name() << ",f64): rel_l2=" << err
              << " (worst " << which << ")\n";
  }
}

TEST(BobCpu, TiledMatchesNaiveF32) {
  auto cpu = Cpu();
  for (const BobCase& c : {BobCase{1, 65, 4, 2, 16, true}, BobCase{1, 40, 2, 1, 64, false}}) {
    BobProblem p = BobProblem::Random(c, 5);
    BobOutputs want = RunNaive(p);
    auto got = RunCpuOp(*cpu, p, DType::kF32, /*strided=*/false);
    ASSERT_TRUE(got.ok()) << got.status();
    std::string which;
    // f32 storage of inputs, O, L, D and outputs; sums are f64. Observed ~1e-6.
    EXPECT_LT(WorstRelL2(*got, want, &which), 1e-5) << c.Name() << ": " << which;
  }
}

TEST(BobCpu, StridedViewsGiveTheSameResult) {
  auto cpu = Cpu();
  const BobCase c{2, 45, 4, 2, 16, true};
  BobProblem p = BobProblem::Random(c, 3);
  auto dense = RunCpuOp(*cpu, p, DType::kF64, false);
  auto strided = RunCpuOp(*cpu, p, DType::kF64, true);
  ASSERT_TRUE(dense.ok() && strided.ok());
  std::string which;
  EXPECT_EQ(WorstRelL2(*strided, *dense, &which), 0.0) << which;  // same arithmetic, bit for bit
}

TEST(BobCpu, ThreadCountDoesNotChangeTheResult) {
  const BobCase c{1, 100, 4, 2, 16, true};
  BobProblem p = BobProblem::Random(c, 9);
  auto one = Cpu(1), two = Cpu(2);
  auto a = RunCpuOp(*one, p, DType::kF64, false);
  auto b = RunCpuOp(*two, p, DType::kF64, false);
  ASSERT_TRUE(a.ok() && b.ok());
  std::string which;
  EXPECT_EQ(WorstRelL2(*a, *b, &which), 0.0) << which;  // no cross-task reductions
}

// Every cotangent contributes: dropping one changes the outputs (guards against a
// kernel that ignores gQ, gK or gV and still matches on a symmetric input).
TEST(BobCpu, EachCotangentMatters) {
  auto cpu = Cpu();
  const BobCase c{1, 33, 2, 1, 16, true};
  BobProblem p = BobProblem::Random(c, 11);
  auto full = RunCpuOp(*cpu, p, DType::kF64, false);
  ASSERT_TRUE(full.ok());
  for (int which = 0; which < 3; ++which) {
    BobProblem z = p;
    std::vector<double>* g[] = {&z.gq, &z.gk, &z.gv};
    std::fill(g[which]->begin(), g[which]->end(), 0.0);
    auto part = RunCpuOp(*cpu, z, DType::kF64, false);
    ASSERT_TRUE(part.ok());
    std::string name;
    EXPECT_GT(WorstRelL2(*part, *full, &name), 1e-3) << "cotangent " << which;
    std::string name2;
    EXPECT_LT(WorstRelL2(*part, RunNaive(z), &name2), 1e-12) << "cotangent " << which;
  }
}

TEST(BobCpu, RejectsBadArguments) {
  auto cpu = Cpu();
  const BobCase c{1, 8, 2, 1, 8, true};
  std::vector<double> buf(1024, 0.0);
  auto q = MakeView(buf.data(), DType::kF64, DeviceKind::kCpu, {1, 8, 2, 8});
  auto kv = MakeView(buf.data(), DType::kF64, DeviceKind::kCpu, {1, 8, 1, 8});
  auto st = MakeView(buf.data(), DType::kF64, DeviceKind::kCpu, {1, 2, 8});
  OpDesc desc;
  desc.op = Op::kAttentionBwdBwd;
  desc.dtype = DType::kF64;
  std::vector<TensorView> in = {q, kv, kv, q, q, st, st, q, kv, kv};
  std::vector<double> o1(128), o2(64), o3(64), o4(128);
  std::vector<TensorView> out = {MakeView(o1.data(), DType::kF64, DeviceKind::kCpu, {1, 8, 2, 8}),
                                 MakeView(o2.data(), DType::kF64, DeviceKind::kCpu, {1, 8, 1, 8}),
                                 MakeView(o3.data(), DType::kF64, DeviceKind::kCpu, {1, 8, 1, 8}),
                                 MakeView(o4.data(), DType::kF64, DeviceKind::kCpu, {1, 8, 2, 8})};
  EXPECT_TRUE(cpu->Run(desc, in, out).ok());
  // Wrong arity.
  EXPECT_EQ(cpu->Run(desc, absl::MakeSpan(in).subspan(0, 9), out).code(),
            absl::StatusCode::kInvalidArgument);
  // gK with the query heads' count.
  auto bad = in;
  bad[8] = q;
  EXPECT_EQ(cpu->Run(desc, bad, out).code(), absl::StatusCode::kInvalidArgument);
  // L with the wrong length.
  bad = in;
  bad[5] = MakeView(buf.data(), DType::kF64, DeviceKind::kCpu, {1, 2, 7});
  EXPECT_EQ(cpu->Run(desc, bad, out).code(), absl::StatusCode::kInvalidArgument);
  // An output aliasing an input.
  auto bad_out = out;
  bad_out[0] = q;
  EXPECT_EQ(cpu->Run(desc, in, bad_out).code(), absl::StatusCode::kInvalidArgument);
  (void)c;
}

}  // namespace
}  // namespace flashtick::bob_test
