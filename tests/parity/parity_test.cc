// gtest glue for the parity harness: one test per (registered case, target), in four
// suites CpuF32, CudaBf16, CudaF16, CudaF32. Each prints its one-line report; FAIL
// fails the test, SKIP (unsupported, unimplemented, GPU-only shape) is GTEST_SKIP
// with the reason. The Cuda* suites skip with a clear message where no GPU is visible.
// ctest runs the CpuF32 suite as parity_cpu (label cpu) and the Cuda* suites as
// parity_gpu (label gpu).
#include <cctype>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/parity/parity.h"

namespace flashtick::parity {
namespace {

struct Target {
  const char* device;
  DType dtype;
};

struct Env {
  std::unique_ptr<Backend> cpu, cuda;
  std::string cuda_error;
  cpu::ThreadPool pool{0};
  ParityContext ctx;
  Env() {
    auto c = CreateBackend("cpu", {});
    if (c.ok()) cpu = std::move(*c);
    if (CudaAvailable()) {
      auto g = CreateBackend("cuda", {});
      if (g.ok())
        cuda = std::move(*g);
      else
        cuda_error = g.status().ToString();
    } else {
      cuda_error = "no CUDA GPU visible to this process (or a build without CUDA)";
    }
    ctx.cpu = cpu.get();
    ctx.pool = &pool;
  }
};

Env& GetEnv() {
  static Env env;
  return env;
}

class ParityTest : public testing::TestWithParam<size_t> {
 protected:
  void RunOn(const Target& t) {
    Env& env = GetEnv();
    ASSERT_NE(env.cpu, nullptr);
    Backend* b = std::string(t.device) == "cpu" ? env.cpu.get() : env.cuda.get();
    if (b == nullptr) GTEST_SKIP() << "SKIP GPU parity: " << env.cuda_error;
    const TestCase& c = *AllCases()[GetParam()];
    const CaseResult r = RunCase(c, *b, t.dtype, env.ctx);
    std::printf("%s\n", r.line.c_str());
    std::fflush(stdout);
    if (r.verdict == Verdict::kSkip) GTEST_SKIP() << r.detail;
    EXPECT_EQ(r.verdict, Verdict::kOk) << r.line;
  }
};

std::string CaseName(const testing::TestParamInfo<size_t>& info) {
  std::string s = absl::StrCat("c", info.param, "_", AllCases()[info.param]->Label());
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

std::vector<size_t> CaseIndices() {
  std::vector<size_t> v(AllCases().size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

using CpuF32 = ParityTest;
using CudaBf16 = ParityTest;
using CudaF16 = ParityTest;
using CudaF32 = ParityTest;
TEST_P(CpuF32, Case) { RunOn({"cpu", DType::kF32}); }
TEST_P(CudaBf16, Case) { RunOn({"cuda", DType::kBF16}); }
TEST_P(CudaF16, Case) { RunOn({"cuda", DType::kF16}); }
TEST_P(CudaF32, Case) { RunOn({"cuda", DType::kF32}); }
INSTANTIATE_TEST_SUITE_P(Parity, CpuF32, testing::ValuesIn(CaseIndices()), CaseName);
INSTANTIATE_TEST_SUITE_P(Parity, CudaBf16, testing::ValuesIn(CaseIndices()), CaseName);
INSTANTIATE_TEST_SUITE_P(Parity, CudaF16, testing::ValuesIn(CaseIndices()), CaseName);
INSTANTIATE_TEST_SUITE_P(Parity, CudaF32, testing::ValuesIn(CaseIndices()), CaseName);

}  // namespace
}  // namespace flashtick::parity
