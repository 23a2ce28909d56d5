// The harness must be able to fail: a fake backend wraps the CPU reference and
// perturbs its outputs, poisons one value with NaN, skips writing an output, or
// answers Unimplemented; RunCase must report FAIL, FAIL, FAIL and SKIP, and OK for
// the untouched CPU.
#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/parity/parity.h"

namespace flashtick::parity {
namespace {

enum class Fault { kNone, kPerturb, kNaN, kNoWrite, kUnimplemented };

class FaultyBackend final : public Backend {
 public:
  FaultyBackend(Backend* inner, Fault fault) : inner_(inner), fault_(fault) {}
  std::string name() const override { return "faulty"; }
  DeviceKind device() const override { return DeviceKind::kCpu; }
  bool Supports(const OpDesc& d) const override { return inner_->Supports(d); }
  std::string KernelPath(const OpDesc& d) const override { return "faulty"; }
  absl::Status Run(const OpDesc& d, absl::Span<const TensorView> in,
                   absl::Span<const TensorView> out) override {
    if (fault_ == Fault::kUnimplemented) return absl::UnimplementedError("faulty: not here");
    if (fault_ == Fault::kNoWrite) return absl::OkStatus();
    absl::Status s = inner_->Run(d, in, out);
    if (!s.ok() || out.empty() || out[0].dtype != DType::kF32) return s;
    float* o = out[0].as<float>();  // first element of the first output
    if (fault_ == Fault::kPerturb) o[0] += 1e-2f;
    if (fault_ == Fault::kNaN) o[0] = std::numeric_limits<float>::quiet_NaN();
    return s;
  }
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t b) override { return inner_->Allocate(b); }
  absl::Status Copy(void* d, DeviceKind dd, const void* s, DeviceKind sd, size_t b) override {
    return inner_->Copy(d, dd, s, sd, b);
  }
  absl::Status Zero(void* d, size_t b) override { return inner_->Zero(d, b); }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  MemoryStats Memory() const override { return inner_->Memory(); }
  void ResetPeakMemory() override {}
  const void* memory_domain() const override { return inner_->memory_domain(); }

 private:
  Backend* inner_;
  Fault fault_;
};

const TestCase* FindCase(const std::string& label) {
  for (const auto& c : AllCases())
    if (c->Label() == label) return c.get();
  return nullptr;
}

TEST(ParitySelfTest, ReportsFaults) {
  auto cpu = CreateBackend("cpu", {.threads = 2});
  ASSERT_TRUE(cpu.ok());
  cpu::ThreadPool pool(2);
  ParityContext ctx{cpu->get(), &pool};
  const TestCase* c = FindCase("attention_fwd(B=2,H=4,T=37,D=64,causal=1)");
  ASSERT_NE(c, nullptr) << "the attention case table changed; pick another case here";
  const std::pair<Fault, Verdict> expect[] = {{Fault::kNone, Verdict::kOk},
                                              {Fault::kPerturb, Verdict::kFail},
                                              {Fault::kNaN, Verdict::kFail},
                                              {Fault::kNoWrite, Verdict::kFail},
                                              {Fault::kUnimplemented, Verdict::kSkip}};
  for (const auto& [fault, verdict] : expect) {
    FaultyBackend b(cpu->get(), fault);
    const CaseResult r = RunCase(*c, b, DType::kF32, ctx);
    std::printf("%s\n", r.line.c_str());
    EXPECT_EQ(r.verdict, verdict) << r.line;
  }
}

}  // namespace
}  // namespace flashtick::parity
