// JAX float64 oracle for attention backward-over-backward: jax.vjp of the vjp of
// attention (tests/bob/jax_oracle.py, run through FLASHTICK_PYTHON) against the CPU
// reference op (f64) and the plain reference, on these shapes: T = 1, 37, 45, 64;
// causal and not; GQA H=4/Hkv=2; D = 16, 64 and 256; random, non-zero gQ, gK, gV.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "tests/bob/bob_problem.h"

namespace flashtick::bob_test {
namespace {

std::vector<BobCase> OracleCases() {
  return {
      {1, 1, 4, 2, 16, true},   {1, 37, 4, 2, 16, true},  {1, 37, 4, 2, 16, false},
      {1, 64, 4, 2, 64, true},  {1, 64, 4, 2, 64, false}, {2, 37, 2, 2, 64, true},
      {1, 64, 2, 1, 16, false}, {1, 45, 4, 2, 256, true},
  };
}

TEST(BobOracle, CpuMatchesJaxVjpOfVjp) {
  const std::vector<BobCase> cases = OracleCases();
  std::vector<BobProblem> problems;
  std::string cmd =
      absl::StrCat("'", FLASHTICK_PYTHON, "' '", FLASHTICK_SOURCE_DIR, "/tests/bob/jax_oracle.py'");
  const std::string dir = ::testing::TempDir();
  for (size_t i = 0; i < cases.size(); ++i) {
    problems.push_back(BobProblem::Random(cases[i], 100 + i));
    const std::string path = absl::StrCat(dir, "/bob_oracle_", getpid(), "_", i, ".bin");
    ASSERT_TRUE(WriteOracleInput(path, problems.back()).ok());
    absl::StrAppend(&cmd, " '", path, "'");
  }
  // One interpreter for every case: JAX start-up dominates on a small machine.
  const int rc = std::system(cmd.c_str());
  ASSERT_EQ(rc, 0) << "the JAX oracle failed: " << cmd
                   << "\n(needs jax in FLASHTICK_PYTHON; scripts/setup.sh makes .venv)";
  auto cpu = CreateBackend("cpu", BackendOptions{2, 0});
  ASSERT_TRUE(cpu.ok());
  for (size_t i = 0; i < cases.size(); ++i) {
    const BobCase& c = cases[i];
    const std::string path = absl::StrCat(dir, "/bob_oracle_", getpid(), "_", i, ".bin");
    BobOutputs jax;
    std::vector<double> o, lse, dvec;
    ASSERT_TRUE(ReadOracleOutput(path + ".out", c, &jax, &o, &lse, &dvec).ok()) << c.Name();
    const BobProblem& p = problems[i];
    // The op's stored inputs (O, L, D) agree with JAX's forward.
    EXPECT_LT(RelL2(p.o, o), 1e-13) << c.Name();
    EXPECT_LT(RelL2(p.lse, lse), 1e-13) << c.Name();
    EXPECT_LT(RelL2(p.dvec, dvec), 1e-12) << c.Name();
    auto got = RunCpuOp(**cpu, p, DType::kF64, /*strided=*/i % 2 == 1);
    ASSERT_TRUE(got.ok()) << got.status();
    std::string which;
    const double err = WorstRelL2(*got, jax, &which);
    // T = 1: ∂Q = ∂K = 0 exactly (a one-key softmax is constant); RelL2 is then absolute.
    EXPECT_LT(err, 1e-11) << c.Name() << ": worst " << which;
    std::string which_naive;
    EXPECT_LT(WorstRelL2(RunNaive(p), jax, &which_naive), 1e-11) << c.Name();
    std::cout << "attention_bwd_bwd_cpu_vs_jax(" << c.Name() << "): rel_l2=" << err << " (worst "
              << which << ")\n";
    std::remove(path.c_str());
    std::remove((path + ".out").c_str());
  }
}

}  // namespace
}  // namespace flashtick::bob_test
