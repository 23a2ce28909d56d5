// The backend parity harness, after ggml's test-backend-ops: every registered op case
// runs on every available backend target (cpu fp32; cuda bf16, fp16, fp32) and is
// compared with the CPU backend in fp64 on the same inputs by normalised MSE
//   nmse = Σ (out − ref)² / Σ ref²,
// with NaN/Inf checked separately and Unimplemented reported as SKIP, never as a pass.
// Ops with a low-precision naive counterpart (attention) also get the FlashAttention
// bound: max|out − ref| ≤ 2 · max|naive − ref| (+ 2^-18 · max(1, max|ref|), fp32 noise,
// for outputs the naive code gets exactly) for the naive implementation in the target's
// precision (bf16, fp16, and fp32 too: unlike nmse, a max-error bound does not
// average one wrong element away).
//
// Adding an op: write tests/parity/cases_<op>.cc with TestCase subclasses and register
// them with FT_PARITY_CASES(<op>) { return list; }. See cases_attention.cc.
// One line per case: `attention_bwd(B=2,H=4,T=1000,D=64,causal=1) [flash_cuda bf16]: OK nmse=3.1e-9`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/cpu/thread_pool.h"

namespace flashtick::parity {

// How a tensor's dtype follows the run dtype (see TestCase::TensorDType).
enum class Role : uint8_t {
  kData,  // the run dtype (fp64 for the reference, bf16 on a bf16 target, ...)
  kStat,  // row statistics: fp32 on bf16/fp16 runs, else the run dtype (attention L, D)
  kF32,   // fp32 state (master weights, optimizer moments); fp64 in the reference run
  kI32,   // integer labels/indices: int32 everywhere
};

struct TensorSpec {
  TensorSpec() = default;
  TensorSpec(std::string name_in, std::vector<int64_t> shape_in, Role role_in = Role::kData)
      : name(std::move(name_in)), shape(std::move(shape_in)), role(role_in) {}

  std::string name;
  std::vector<int64_t> shape;
  Role role = Role::kData;
  // Strides in elements; empty means contiguous. The buffer spans the whole strided
  // extent and its gaps hold NaN, so a kernel that reads outside its view fails.
  std::vector<int64_t> strides;
  // Inputs: values drawn uniformly from [lo, hi) (integers: [lo, hi) rounded down).
  double lo = -1.0, hi = 1.0;
  // Outputs: compared with the reference (false for scratch outputs).
  bool compare = true;
  // Outputs: start from generated values instead of NaN (ops that accumulate into
  // their output, e.g. matmul with beta = 1).
  bool accumulate = false;
};

// A tensor's logical values in fp64, dense row-major in spec.shape.
struct HostTensor {
  TensorSpec spec;
  std::vector<double> values;
  int64_t numel() const;
};

// What cases may use beyond their own inputs.
struct ParityContext {
  Backend* cpu = nullptr;            // the CPU reference backend (fp64 capable)
  cpu::ThreadPool* pool = nullptr;   // for naive references that parallelise
};

class TestCase {
 public:
  virtual ~TestCase() = default;

  virtual std::string Name() const = 0;  // op name: "attention_bwd"
  virtual std::string Vars() const = 0;  // "B=2,H=4,T=1000,D=64,causal=1"
  virtual OpDesc Desc() const = 0;       // op and attributes; the runner sets dtype
  virtual std::vector<TensorSpec> Inputs() const = 0;
  virtual std::vector<TensorSpec> Outputs() const = 0;

  // Fills generated input `index` (default: uniform in [spec.lo, spec.hi)).
  virtual void Fill(size_t index, std::mt19937_64& rng, HostTensor& t) const;
  // Computes inputs that depend on others, in fp64 (attention_bwd: O and L from the
  // forward). Runs once per case, before any target sees the inputs.
  virtual absl::Status Prepare(ParityContext& ctx, std::vector<HostTensor>& inputs) const {
    return absl::OkStatus();
  }
  // Largest accepted nmse of output `output` on a `dtype` run. Defaults (STYLE rule 3):
  // fp32 1e-7, bf16 1e-4, fp16 1e-5.
  virtual double MaxNmse(DType dtype, size_t output) const;
  // The naive implementation's outputs in `dtype` precision for the FlashAttention
  // bound, one vector per output (empty vector: no bound for that output). Default:
  // no bound.
  virtual absl::StatusOr<std::vector<std::vector<double>>> NaiveLowPrecision(
      ParityContext& ctx, DType dtype, const std::vector<HostTensor>& inputs) const {
    return std::vector<std::vector<double>>{};
  }
  // Shapes too slow for the CPU fp32 target (e.g. T = 4096) run on GPU targets only.
  virtual bool GpuOnly() const { return false; }
  // The magnitude of the intermediate terms an output is computed from, when it can
  // exceed the output's own (an exact 0 reached as a difference of D-term dot
  // products). The FlashAttention bound's fp32 slack is 64 ulp at
  // max(1, |reference|, RoundingScale()): summation order alone moves such an output
  // by ulps of its terms, not of its value. Default 1.
  virtual double RoundingScale() const { return 1.0; }
  // dtype of a tensor on a run in `run` dtype.
  virtual DType TensorDType(const TensorSpec& spec, DType run) const;

  std::string Label() const { return Name() + "(" + Vars() + ")"; }
};

enum class Verdict : uint8_t { kOk, kFail, kSkip };

struct CaseResult {
  Verdict verdict = Verdict::kSkip;
  std::string line;        // the one-line report
  double nmse = 0.0;       // worst output
  std::string detail;      // why it failed or skipped
};

// Registration. A cases_<op>.cc file writes
//   FT_PARITY_CASES(attention) { std::vector<std::unique_ptr<TestCase>> v; ...; return v; }
using CaseList = std::vector<std::unique_ptr<TestCase>>;
bool RegisterCases(const char* group, CaseList (*factory)());
// Every registered case, built once, in registration order.
const CaseList& AllCases();

#define FT_PARITY_CASES(group)                                                         \
  static ::flashtick::parity::CaseList FtParityCases_##group();                         \
  [[maybe_unused]] static const bool ft_parity_registered_##group =                     \
      ::flashtick::parity::RegisterCases(#group, &FtParityCases_##group);              \
  static ::flashtick::parity::CaseList FtParityCases_##group()

// Runs `test` on `target` in `dtype` against the CPU fp64 reference. Reference and
// naive results are cached per case (keyed by the case pointer) across targets.
CaseResult RunCase(const TestCase& test, Backend& target, DType dtype, ParityContext& ctx);

}  // namespace flashtick::parity
