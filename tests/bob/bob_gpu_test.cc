// CUDA attention backward-over-backward (kernels/cuda/attention/bwd_bwd/) against the
// float64 CPU reference and the JAX oracle, in bf16 and fp16, D = 64, 128 and 256 (its
// own 32 × 32 tiles), causal and not, GQA, T not a multiple of the tile, strided views. Inputs are rounded to
// the GPU dtype first, so the float64 reference answers the same question. Bound
// (STYLE rule 4): for every output, error(kernel vs f64) ≤ 2 × error(plain reference
// with the same 16-bit roundings vs f64). Skips with a message when no GPU is present.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/common/half.h"
#include "tests/bob/bob_problem.h"

namespace flashtick::bob_test {
namespace {

double RoundBf16(double x) { return Bf16BitsToFloat(FloatToBf16Bits(static_cast<float>(x))); }
double RoundF16(double x) { return HalfBitsToFloat(FloatToHalfBits(static_cast<float>(x))); }
using RoundFn = double (*)(double);
RoundFn Rounder(DType dt) { return dt == DType::kBF16 ? RoundBf16 : RoundF16; }

// The problem with its inputs rounded to `dt`, and O, L, D recomputed in f64 from them.
BobProblem RoundedProblem(const BobCase& c, DType dt, uint64_t seed) {
  BobProblem p = BobProblem::Random(c, seed);
  for (auto* v : {&p.q, &p.k, &p.v, &p.dout, &p.gq, &p.gk, &p.gv})
    for (double& x : *v) x = Rounder(dt)(x);
  p.RecomputeStats();
  return p;
}

class GpuRunner {
 public:
  explicit GpuRunner(Backend& gpu) : gpu_(gpu) {}

  // Runs the op on the GPU; strided: the [B, T, heads, D] operands live in [B, heads, T, D].
  absl::StatusOr<BobOutputs> Run(const BobProblem& p, DType dt, bool strided) {
    const BobCase& c = p.c;
    std::vector<TensorView> in, out;
    for (auto [src, heads] : std::vector<std::pair<const std::vector<double>*, int64_t>>{
             {&p.q, c.H}, {&p.k, c.Hkv}, {&p.v, c.Hkv}, {&p.o, c.H}, {&p.dout, c.H}}) {
      ASSIGN_OR_RETURN(TensorView t, Upload16(*src, c, heads, dt, strided));
      in.push_back(t);
    }
    for (const std::vector<double>* st : {&p.lse, &p.dvec}) {
      ASSIGN_OR_RETURN(TensorView t, UploadStats(*st, c));
      in.push_back(t);
    }
    for (auto [src, heads] : std::vector<std::pair<const std::vector<double>*, int64_t>>{
             {&p.gq, c.H}, {&p.gk, c.Hkv}, {&p.gv, c.Hkv}}) {
      ASSIGN_OR_RETURN(TensorView t, Upload16(*src, c, heads, dt, strided));
      in.push_back(t);
    }
    const std::vector<double> none;
    for (int64_t heads : {c.H, c.Hkv, c.Hkv, c.H}) {
      ASSIGN_OR_RETURN(TensorView t, Upload16(none, c, heads, dt, strided));
      out.push_back(t);
    }
    OpDesc desc;
    desc.op = Op::kAttentionBwdBwd;
    desc.dtype = dt;
    desc.attention.causal = c.causal;
    desc.attention.head_dim = static_cast<int>(c.D);
    RETURN_IF_ERROR(gpu_.Run(desc, in, out));
    BobOutputs r;
    ASSIGN_OR_RETURN(r.ddq, Download16(out[0], c, c.H));
    ASSIGN_OR_RETURN(r.ddk, Download16(out[1], c, c.Hkv));
    ASSIGN_OR_RETURN(r.ddv, Download16(out[2], c, c.Hkv));
    ASSIGN_OR_RETURN(r.dddo, Download16(out[3], c, c.H));
    buffers_.clear();
    return r;
  }

 private:
  absl::StatusOr<TensorView> Upload16(const std::vector<double>& src, const BobCase& c,
                                      int64_t heads, DType dt, bool strided) {
    const int64_t n = c.B * c.T * heads * c.D;
    std::vector<uint16_t> host(n, 0);
    TensorView v = MakeView(nullptr, dt, DeviceKind::kCuda, {c.B, c.T, heads, c.D});
    if (strided) v.strides = {heads * c.T * c.D, c.D, c.T * c.D, 1, 0};
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t t = 0; t < c.T; ++t)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t d = 0; d < c.D; ++d) {
            const double x = src.empty() ? 0.0 : src[((b * c.T + t) * heads + h) * c.D + d];
            const float f = static_cast<float>(x);
            host[b * v.strides[0] + t * v.strides[1] + h * v.strides[2] + d] =
                dt == DType::kBF16 ? FloatToBf16Bits(f) : FloatToHalfBits(f);
          }
    ASSIGN_OR_RETURN(std::shared_ptr<void> buf, gpu_.Allocate(n * 2));
    RETURN_IF_ERROR(gpu_.Copy(buf.get(), DeviceKind::kCuda, host.data(), DeviceKind::kCpu, n * 2));
    buffers_.push_back(buf);
    v.data = buf.get();
    return v;
  }

  absl::StatusOr<TensorView> UploadStats(const std::vector<double>& src, const BobCase& c) {
    std::vector<float> host(src.begin(), src.end());
    ASSIGN_OR_RETURN(std::shared_ptr<void> buf, gpu_.Allocate(host.size() * 4));
    RETURN_IF_ERROR(
        gpu_.Copy(buf.get(), DeviceKind::kCuda, host.data(), DeviceKind::kCpu, host.size() * 4));
    buffers_.push_back(buf);
    return MakeView(buf.get(), DType::kF32, DeviceKind::kCuda, {c.B, c.H, c.T});
  }

  absl::StatusOr<std::vector<double>> Download16(const TensorView& v, const BobCase& c,
                                                 int64_t heads) {
    const int64_t n = c.B * c.T * heads * c.D;
    std::vector<uint16_t> host(n);
    RETURN_IF_ERROR(gpu_.Copy(host.data(), DeviceKind::kCpu, v.data, DeviceKind::kCuda, n * 2));
    RETURN_IF_ERROR(gpu_.Synchronize());
    std::vector<double> out(n);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t t = 0; t < c.T; ++t)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t d = 0; d < c.D; ++d) {
            const uint16_t bits = host[b * v.strides[0] + t * v.strides[1] + h * v.strides[2] + d];
            out[((b * c.T + t) * heads + h) * c.D + d] =
                v.dtype == DType::kBF16 ? Bf16BitsToFloat(bits) : HalfBitsToFloat(bits);
          }
    return out;
  }

  Backend& gpu_;
  std::vector<std::shared_ptr<void>> buffers_;
};

std::unique_ptr<Backend> GpuOrNull() {
  if (!CudaAvailable()) return nullptr;
  auto b = CreateBackend("cuda");
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? std::move(b).value() : nullptr;
}

#define SKIP_WITHOUT_GPU(gpu)                                                 \
  if ((gpu) == nullptr)                                                       \
  GTEST_SKIP() << "no CUDA GPU visible (or a build without CUDA): the CUDA "  \
                  "attention_bwd_bwd kernels are checked on the GPU machine " \
                  "(bench/scripts/gpu_bob.sh)"

// error(kernel) ≤ 2 · error(same-precision plain reference), per output, + reporting.
void ExpectWithinBound(const BobOutputs& got, const BobOutputs& ref64, const BobOutputs& naive,
                       const std::string& label) {
  ASSERT_TRUE(AllFinite(got)) << label << ": NaN or Inf in the kernel's outputs";
  const char* names[] = {"dQ", "dK", "dV", "ddO"};
  const std::vector<double>* g[] = {&got.ddq, &got.ddk, &got.ddv, &got.dddo};
  const std::vector<double>* r[] = {&ref64.ddq, &ref64.ddk, &ref64.ddv, &ref64.dddo};
  const std::vector<double>* n[] = {&naive.ddq, &naive.ddk, &naive.ddv, &naive.dddo};
  std::string line = label + ":";
  for (int i = 0; i < 4; ++i) {
    const double ek = RelL2(*g[i], *r[i]), en = RelL2(*n[i], *r[i]);
    // kBoundFloor: absolute where the exact output is 0 (T = 1: ∂Q = ∂K = 0).
    EXPECT_LE(ek, 2.0 * en + kBoundFloor)
        << label << " " << names[i] << ": kernel " << ek << " vs same-precision reference " << en;
    absl::StrAppend(&line, " ", names[i], "=", ek, " (naive ", en, ")");
  }
  std::cout << line << "\n";
}

BobOutputs NaiveLowPrecision(const BobProblem& p, DType dt) {
  BobOutputs out{std::vector<double>(p.c.QSize()), std::vector<double>(p.c.KvSize()),
                 std::vector<double>(p.c.KvSize()), std::vector<double>(p.c.QSize())};
  cpu::BobNaiveBwdBwd(p.config(), p.q.data(), p.k.data(), p.v.data(), p.dout.data(), p.gq.data(),
                      p.gk.data(), p.gv.data(), out.ddq.data(), out.ddk.data(), out.ddv.data(),
                      out.dddo.data(), Rounder(dt));
  return out;
}

TEST(BobGpu, MatchesFloat64ReferenceWithinTheFlashBound) {
  auto gpu = GpuOrNull();
  SKIP_WITHOUT_GPU(gpu);
  auto cpu = CreateBackend("cpu");
  ASSERT_TRUE(cpu.ok());
  GpuRunner runner(*gpu);
  std::vector<BobCase> shapes = {{1, 1, 2, 1, 64, true},    {1, 37, 4, 2, 64, true},
                                 {2, 64, 2, 2, 64, false},  {1, 100, 4, 2, 64, true},
                                 {1, 257, 2, 1, 64, false}, {1, 1000, 2, 2, 64, true}};
  int seed = 0;
  for (DType dt : {DType::kBF16, DType::kF16})
    for (int64_t D : {64, 128, 256})
      for (BobCase c : shapes) {
        c.D = D;
        // Keeps the CPU references short; D = 256 keeps the long causal row (T = 1000:
        // 32 tiles of 32 rows, causal ranges and GQA over many steps), GPU-only.
        if (D == 128 && c.T > 300) continue;
        const BobProblem p = RoundedProblem(c, dt, 1000 + seed++);
        auto ref = RunCpuOp(**cpu, p, DType::kF64, false);
        ASSERT_TRUE(ref.ok()) << ref.status();
        auto got = runner.Run(p, dt, /*strided=*/seed % 2 == 0);
        ASSERT_TRUE(got.ok()) << c.Name() << ": " << got.status();
        ExpectWithinBound(*got, *ref, NaiveLowPrecision(p, dt),
                          absl::StrCat("attention_bwd_bwd_gpu(", c.Name(), ",", DTypeName(dt),
                                       seed % 2 == 0 ? ",strided" : "", ")"));
      }
}

TEST(BobGpu, MatchesJaxOracle) {
  auto gpu = GpuOrNull();
  SKIP_WITHOUT_GPU(gpu);
  GpuRunner runner(*gpu);
  const std::vector<BobCase> cases = {
      {1, 37, 4, 2, 64, true}, {1, 64, 2, 1, 128, false}, {1, 45, 4, 2, 256, true}};
  std::vector<BobProblem> problems;
  std::string cmd =
      absl::StrCat("'", FLASHTICK_PYTHON, "' '", FLASHTICK_SOURCE_DIR, "/tests/bob/jax_oracle.py'");
  std::vector<std::string> paths;
  for (size_t i = 0; i < cases.size(); ++i) {
    problems.push_back(RoundedProblem(cases[i], DType::kBF16, 77 + i));
    paths.push_back(absl::StrCat(::testing::TempDir(), "/bob_gpu_jax_", getpid(), "_", i, ".bin"));
    ASSERT_TRUE(WriteOracleInput(paths.back(), problems.back()).ok());
    absl::StrAppend(&cmd, " '", paths.back(), "'");
  }
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "the JAX oracle failed: " << cmd;
  for (size_t i = 0; i < cases.size(); ++i) {
    BobOutputs jax;
    std::vector<double> o, lse, dvec;
    ASSERT_TRUE(ReadOracleOutput(paths[i] + ".out", cases[i], &jax, &o, &lse, &dvec).ok());
    auto got = runner.Run(problems[i], DType::kBF16, false);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectWithinBound(*got, jax, NaiveLowPrecision(problems[i], DType::kBF16),
                      absl::StrCat("attention_bwd_bwd_gpu_vs_jax(", cases[i].Name(), ",bf16)"));
    std::remove(paths[i].c_str());
    std::remove((paths[i] + ".out").c_str());
  }
}

TEST(BobGpu, DeterministicAndLinearMemory) {
  auto gpu = GpuOrNull();
  SKIP_WITHOUT_GPU(gpu);
  GpuRunner runner(*gpu);
  const BobCase c{1, 2000, 4, 2, 64, true};
  const BobProblem p = RoundedProblem(c, DType::kBF16, 5);
  auto first = runner.Run(p, DType::kBF16, false);
  ASSERT_TRUE(first.ok()) << first.status();
  const int64_t before = gpu->Memory().used_bytes;
  gpu->ResetPeakMemory();
  auto second = runner.Run(p, DType::kBF16, false);
  ASSERT_TRUE(second.ok());
  std::string which;
  EXPECT_EQ(WorstRelL2(*second, *first, &which), 0.0) << "no atomics: runs are bit-identical";
  // Extra memory beyond the inputs and outputs the runner uploads: the row states only.
  const int64_t io_bytes = 2 * (6 * c.QSize() + 6 * c.KvSize()) + 4 * 2 * c.StatSize();
  const int64_t extra = gpu->Memory().peak_bytes - before - io_bytes;
  EXPECT_LE(extra, 2 * 4 * c.StatSize() + (1 << 20)) << "peak extra bytes " << extra;
}

TEST(BobGpu, RejectsUnsupportedVariants) {
  auto gpu = GpuOrNull();
  SKIP_WITHOUT_GPU(gpu);
  GpuRunner runner(*gpu);
  // 24: no kernel head dim (16, 32, 96 run zero-padded, 64, 128, 256 natively).
  const BobProblem p24 = RoundedProblem({1, 16, 2, 1, 24, true}, DType::kBF16, 1);
  EXPECT_TRUE(absl::IsUnimplemented(runner.Run(p24, DType::kBF16, false).status()));
  const BobProblem p32 = RoundedProblem({1, 16, 2, 1, 64, true}, DType::kBF16, 1);
  EXPECT_TRUE(absl::IsUnimplemented(runner.Run(p32, DType::kF32, false).status()));
}

}  // namespace
}  // namespace flashtick::bob_test
