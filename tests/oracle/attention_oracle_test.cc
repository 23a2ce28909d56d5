// Attention forward and backward against JAX in float64 (tests/oracle/attention_oracle.py:
// jax.vjp of a plain softmax attention). The CPU backend in fp64 must agree to ~1e-12
// relative L2; the CUDA backend in bf16 and fp16 to nmse ≤ 1e-4 / 1e-5 (the parity
// defaults). Shapes: T = 1 and 37 (ragged), causal and not, GQA, D ∈ {16, 32, 64, 96,
// 128, 256} (CUDA runs 64, 128 and 256 natively, 16, 32 and 96 zero-padded on those).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/common/half.h"
#include "kernels/ops/attention.h"
#include "model/safetensors.h"

namespace flashtick {
namespace {

struct OracleCase {
  int64_t B, T, H, Hkv, D;
  bool causal;
  std::string Spec() const { return absl::StrJoin({B, T, H, Hkv, D, int64_t{causal}}, ","); }
};

const OracleCase kCases[] = {
    {1, 1, 2, 2, 16, true},  {1, 1, 2, 1, 64, false}, {1, 37, 2, 2, 16, true},
    {1, 37, 2, 2, 16, false}, {2, 37, 4, 2, 64, true}, {1, 37, 4, 1, 64, false},
    {1, 70, 2, 2, 128, true}, {1, 70, 2, 2, 128, false}, {1, 37, 2, 1, 32, true},
    {1, 70, 2, 2, 96, false}, {1, 70, 2, 2, 256, true}, {1, 37, 4, 2, 256, false},
};

using Tensors = std::map<std::string, std::vector<double>>;

// Runs the oracle once per process and loads every fixture.
const std::vector<Tensors>& Fixtures() {
  static const std::vector<Tensors>* fixtures = [] {
    auto* out = new std::vector<Tensors>();
    std::string cmd = absl::StrCat("'", FLASHTICK_PYTHON, "' '", FLASHTICK_SOURCE_DIR,
                                   "/tests/oracle/attention_oracle.py' '", FLASHTICK_ORACLE_DIR, "'");
    for (const auto& c : kCases) absl::StrAppend(&cmd, " ", c.Spec());
    if (std::system(cmd.c_str()) != 0) {
      ADD_FAILURE() << "the JAX oracle failed: " << cmd
                    << "\n(needs jax and safetensors in FLASHTICK_PYTHON; scripts/setup.sh makes .venv)";
      return out;
    }
    for (size_t i = 0; i < std::size(kCases); ++i) {
      auto st = Safetensors::ReadFile(absl::StrCat(FLASHTICK_ORACLE_DIR, "/attention_", i, ".safetensors"));
      if (!st.ok()) {
        ADD_FAILURE() << st.status();
        out->clear();
        return out;
      }
      Tensors t;
      for (const auto& [name, tensor] : st->tensors()) {
        std::vector<double> v(tensor.numel());
        EXPECT_EQ(tensor.dtype, DType::kF64) << name;
        std::memcpy(v.data(), tensor.data.data(), v.size() * sizeof(double));
        t[name] = std::move(v);
      }
      out->push_back(std::move(t));
    }
    return out;
  }();
  return *fixtures;
}

double Nmse(const std::vector<double>& got, const std::vector<double>& ref) {
  double e = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) e += (got[i] - ref[i]) * (got[i] - ref[i]), r += ref[i] * ref[i];
  return r > 0 ? e / r : e;
}

// Host-side encode/decode for the dtypes a backend runs in.
std::vector<uint8_t> Encode(const std::vector<double>& x, DType dt) {
  std::vector<uint8_t> b(x.size() * DTypeSize(dt));
  for (size_t i = 0; i < x.size(); ++i) {
    if (dt == DType::kF64) std::memcpy(&b[i * 8], &x[i], 8);
    if (dt == DType::kF32) { const float f = static_cast<float>(x[i]); std::memcpy(&b[i * 4], &f, 4); }
    if (dt == DType::kBF16) { const uint16_t h = DoubleToBf16Bits(x[i]); std::memcpy(&b[i * 2], &h, 2); }
    if (dt == DType::kF16) { const uint16_t h = DoubleToHalfBits(x[i]); std::memcpy(&b[i * 2], &h, 2); }
  }
  return b;
}

std::vector<double> Decode(const std::vector<uint8_t>& b, DType dt) {
  std::vector<double> x(b.size() / DTypeSize(dt));
  for (size_t i = 0; i < x.size(); ++i) {
    if (dt == DType::kF64) std::memcpy(&x[i], &b[i * 8], 8);
    if (dt == DType::kF32) { float f; std::memcpy(&f, &b[i * 4], 4); x[i] = f; }
    if (dt == DType::kBF16) { uint16_t h; std::memcpy(&h, &b[i * 2], 2); x[i] = Bf16BitsToFloat(h); }
    if (dt == DType::kF16) { uint16_t h; std::memcpy(&h, &b[i * 2], 2); x[i] = HalfBitsToFloat(h); }
  }
  return x;
}

// A tensor on a backend's device, filled from fp64 values.
struct DeviceTensor {
  std::shared_ptr<void> mem;
  TensorView view;
};

DeviceTensor Put(Backend& b, const std::vector<double>& x, DType dt, std::initializer_list<int64_t> shape) {
  const auto bytes = Encode(x, dt);
  auto mem = b.Allocate(bytes.size());
  EXPECT_TRUE(mem.ok()) << mem.status();
  EXPECT_TRUE(b.Copy(mem->get(), b.device(), bytes.data(), DeviceKind::kCpu, bytes.size()).ok());
  return {*mem, MakeView(mem->get(), dt, b.device(), shape)};
}

std::vector<double> Get(Backend& b, const DeviceTensor& t) {
  std::vector<uint8_t> bytes(t.view.bytes());
  EXPECT_TRUE(b.Copy(bytes.data(), DeviceKind::kCpu, t.view.data, b.device(), bytes.size()).ok());
  return Decode(bytes, t.view.dtype);
}

// Forward and backward of case i on `b` in `dt`; each output's nmse against JAX must be
// at most max_nmse. The backward takes JAX's O and L, as the op contract prescribes.
void CheckCase(Backend& b, DType dt, size_t i, double max_nmse) {
  const OracleCase& c = kCases[i];
  const Tensors& f = Fixtures()[i];
  const DType st = AttentionStatsDType(dt);
  OpDesc desc;
  desc.dtype = dt;
  desc.attention.causal = c.causal;
  desc.attention.head_dim = static_cast<int>(c.D);
  auto q = Put(b, f.at("q"), dt, {c.B, c.T, c.H, c.D});
  auto k = Put(b, f.at("k"), dt, {c.B, c.T, c.Hkv, c.D});
  auto v = Put(b, f.at("v"), dt, {c.B, c.T, c.Hkv, c.D});
  auto o = Put(b, std::vector<double>(c.B * c.T * c.H * c.D), dt, {c.B, c.T, c.H, c.D});
  auto l = Put(b, std::vector<double>(c.B * c.H * c.T), st, {c.B, c.H, c.T});
  desc.op = Op::kAttentionFwd;
  const TensorView fin[] = {q.view, k.view, v.view};
  const TensorView fout[] = {o.view, l.view};
  const absl::Status fs = b.Run(desc, fin, fout);
  if (absl::IsUnimplemented(fs)) GTEST_SKIP() << "SKIP " << b.name() << ": " << fs;
  ASSERT_TRUE(fs.ok()) << fs;
  const std::string name = absl::StrCat("case ", c.Spec(), " on ", b.name(), " ", DTypeName(dt));
  EXPECT_LE(Nmse(Get(b, o), f.at("o")), max_nmse) << name << " O";
  EXPECT_LE(Nmse(Get(b, l), f.at("lse")), max_nmse) << name << " L";

  auto o_jax = Put(b, f.at("o"), dt, {c.B, c.T, c.H, c.D});
  auto l_jax = Put(b, f.at("lse"), st, {c.B, c.H, c.T});
  auto dout = Put(b, f.at("do"), dt, {c.B, c.T, c.H, c.D});
  auto dq = Put(b, std::vector<double>(c.B * c.T * c.H * c.D), dt, {c.B, c.T, c.H, c.D});
  auto dk = Put(b, std::vector<double>(c.B * c.T * c.Hkv * c.D), dt, {c.B, c.T, c.Hkv, c.D});
  auto dv = Put(b, std::vector<double>(c.B * c.T * c.Hkv * c.D), dt, {c.B, c.T, c.Hkv, c.D});
  auto dvec = Put(b, std::vector<double>(c.B * c.H * c.T), st, {c.B, c.H, c.T});
  desc.op = Op::kAttentionBwd;
  const TensorView bin[] = {q.view, k.view, v.view, o_jax.view, dout.view, l_jax.view};
  const TensorView bout[] = {dq.view, dk.view, dv.view, dvec.view};
  const absl::Status bs = b.Run(desc, bin, bout);
  if (absl::IsUnimplemented(bs)) GTEST_SKIP() << "SKIP " << b.name() << ": " << bs;
  ASSERT_TRUE(bs.ok()) << bs;
  EXPECT_LE(Nmse(Get(b, dq), f.at("dq")), max_nmse) << name << " dQ";
  EXPECT_LE(Nmse(Get(b, dk), f.at("dk")), max_nmse) << name << " dK";
  EXPECT_LE(Nmse(Get(b, dv), f.at("dv")), max_nmse) << name << " dV";
  EXPECT_LE(Nmse(Get(b, dvec), f.at("dvec")), max_nmse) << name << " Dvec";
}

TEST(AttentionOracle, CpuMatchesJaxFloat64) {
  ASSERT_EQ(Fixtures().size(), std::size(kCases));
  auto cpu = CreateBackend("cpu", {.threads = 2});
  ASSERT_TRUE(cpu.ok());
  for (size_t i = 0; i < std::size(kCases); ++i) {
    CheckCase(**cpu, DType::kF64, i, 1e-24);  // relative L2 ≤ 1e-12
    CheckCase(**cpu, DType::kF32, i, 1e-12);  // fp32 storage, fp64 accumulation
  }
}

TEST(AttentionOracle, CudaMatchesJax) {
  if (!CudaAvailable()) GTEST_SKIP() << "SKIP: no CUDA GPU visible to this process (or a build without CUDA)";
  ASSERT_EQ(Fixtures().size(), std::size(kCases));
  auto gpu = CreateBackend("cuda");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  for (size_t i = 0; i < std::size(kCases); ++i) {
    OpDesc d;
    d.op = Op::kAttentionBwd;
    d.dtype = DType::kBF16;
    d.attention.head_dim = static_cast<int>(kCases[i].D);
    EXPECT_TRUE((*gpu)->Supports(d)) << "flash_cuda lacks head dim " << kCases[i].D;
    CheckCase(**gpu, DType::kBF16, i, 1e-4);
    CheckCase(**gpu, DType::kF16, i, 1e-5);
  }
}

}  // namespace
}  // namespace flashtick
