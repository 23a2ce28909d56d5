// Parity cases for attention forward, backward and decode (kernels/ops/attention.h).
// Shape table: T = 1; T not a multiple of any tile (37, 129, 1000); causal tiles that
// are fully masked above the diagonal and a ragged last tile of one row (T = 129);
// D ∈ {16, 32, 64, 96, 128, 256}; GQA H = 8, Hkv = 2; B·H > 1; Q/K/V as slices of a fused
// [B, T, 3, H, D] projection (NaN in the gaps); a long T = 4096 on GPU targets; one
// head at T = 2500, where the CUDA forward splits the keys (split-KV).
// Forward and backward also carry the FlashAttention bound against the naive
// implementation in the target's precision (kernels/cpu/attention_naive.h).
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cpu/attention_naive.h"
#include "kernels/ops/attention.h"
#include "tests/parity/parity.h"

namespace flashtick::parity {
namespace {

struct AttnShape {
  int64_t B, T, H, Hkv, D;
  bool causal;
  bool fused = false;     // Q/K/V strided as slices of a fused [B, T, 3, H, D] buffer
  bool gpu_only = false;  // too slow for the CPU fp32 target
};

class AttentionCaseBase : public TestCase {
 public:
  explicit AttentionCaseBase(AttnShape s) : s_(s) {}
  std::string Vars() const override {
    std::string v = absl::StrCat("B=", s_.B, ",H=", s_.H);
    if (s_.Hkv != s_.H) absl::StrAppend(&v, ",Hkv=", s_.Hkv);
    absl::StrAppend(&v, ",T=", s_.T, ",D=", s_.D, ",causal=", s_.causal ? 1 : 0);
    if (s_.fused) absl::StrAppend(&v, ",fused_qkv=1");
    return v;
  }
  bool GpuOnly() const override { return s_.gpu_only; }
  // Standard normal inputs, as FlashAttention's tests (scores of order 1, so the
  // softmax is neither uniform nor one-hot), made exact in bf16 and fp16 so every
  // target reads the same values: the backward's L (an input, computed from Q and K)
  // then matches the S a bf16 kernel computes. With rounded Q, K but L from the
  // unrounded ones, P = exp(S − L) would be off by the rounding of S, an error the
  // naive code (which renormalises) never makes.
  void Fill(size_t index, std::mt19937_64& rng, HostTensor& t) const override {
    std::normal_distribution<double> n(0.0, 1.0);
    for (auto& v : t.values) v = ExactIn16Bit(n(rng));
  }
  // Rounded to bf16, then to fp16: representable in both (bf16's 8 significant bits fit
  // fp16's 11; below fp16's normal range its subnormal grid is the coarser one).
  static double ExactIn16Bit(double x) {
    return cpu::RoundTo(DType::kF16, cpu::RoundTo(DType::kBF16, x));
  }

 protected:
  OpDesc MakeDesc(Op op) const {
    OpDesc d;
    d.op = op;
    d.attention.causal = s_.causal;
    d.attention.head_dim = static_cast<int>(s_.D);
    return d;
  }
  AttentionShape Shape() const { return {s_.B, s_.T, s_.H, s_.Hkv, s_.D}; }
  // [B, T, heads, D]; the fused layout puts slot `slot` of [B, T, 3, H, D].
  TensorSpec Bthd(const char* name, int64_t heads, int slot) const {
    TensorSpec t{name, {s_.B, s_.T, heads, s_.D}};
    if (s_.fused) t.strides = {s_.T * 3 * s_.H * s_.D, 3 * s_.H * s_.D, s_.D, 1};
    return t;
  }
  TensorSpec Stats(const char* name) const {
    return TensorSpec(name, {s_.B, s_.H, s_.T}, Role::kStat);
  }
  cpu::NaiveAttentionOptions NaiveOpts(ParityContext& ctx, DType dt) const {
    cpu::NaiveAttentionOptions o;
    o.causal = s_.causal;
    o.emulate = dt;
    o.pool = ctx.pool;
    return o;
  }
  AttnShape s_;
};

class AttentionFwdCase final : public AttentionCaseBase {
 public:
  using AttentionCaseBase::AttentionCaseBase;
  std::string Name() const override { return "attention_fwd"; }
  OpDesc Desc() const override { return MakeDesc(Op::kAttentionFwd); }
  std::vector<TensorSpec> Inputs() const override {
    return {Bthd("Q", s_.H, 0), Bthd("K", s_.Hkv, 1), Bthd("V", s_.Hkv, 2)};
  }
  std::vector<TensorSpec> Outputs() const override {
    return {TensorSpec{"O", {s_.B, s_.T, s_.H, s_.D}}, Stats("L")};
  }
  absl::StatusOr<std::vector<std::vector<double>>> NaiveLowPrecision(
      ParityContext& ctx, DType dt, const std::vector<HostTensor>& in) const override {
    std::vector<std::vector<double>> out{std::vector<double>(in[0].numel()),
                                         std::vector<double>(s_.B * s_.H * s_.T)};
    cpu::NaiveAttentionFwd(Shape(), NaiveOpts(ctx, dt), in[0].values.data(), in[1].values.data(),
                           in[2].values.data(), out[0].data(), out[1].data());
    return out;
  }
};

class AttentionBwdCase final : public AttentionCaseBase {
 public:
  using AttentionCaseBase::AttentionCaseBase;
  std::string Name() const override { return "attention_bwd"; }
  OpDesc Desc() const override { return MakeDesc(Op::kAttentionBwd); }
  std::vector<TensorSpec> Inputs() const override {
    return {Bthd("Q", s_.H, 0), Bthd("K", s_.Hkv, 1), Bthd("V", s_.Hkv, 2),
            TensorSpec{"O", {s_.B, s_.T, s_.H, s_.D}}, TensorSpec{"dO", {s_.B, s_.T, s_.H, s_.D}},
            Stats("L")};
  }
  std::vector<TensorSpec> Outputs() const override {
    return {TensorSpec{"dQ", {s_.B, s_.T, s_.H, s_.D}}, TensorSpec{"dK", {s_.B, s_.T, s_.Hkv, s_.D}},
            TensorSpec{"dV", {s_.B, s_.T, s_.Hkv, s_.D}}, Stats("Dvec")};
  }
  // O and L are the fp64 forward of the generated Q, K, V (the backward's contract),
  // stored as every target reads them: O exact in 16 bits, L in fp32.
  absl::Status Prepare(ParityContext& ctx, std::vector<HostTensor>& in) const override {
    cpu::NaiveAttentionOptions o = NaiveOpts(ctx, DType::kF64);
    cpu::NaiveAttentionFwd(Shape(), o, in[0].values.data(), in[1].values.data(), in[2].values.data(),
                           in[3].values.data(), in[5].values.data());
    for (auto& v : in[3].values) v = ExactIn16Bit(v);
    for (auto& v : in[5].values) v = cpu::RoundTo(DType::kF32, v);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::vector<double>>> NaiveLowPrecision(
      ParityContext& ctx, DType dt, const std::vector<HostTensor>& in) const override {
    const int64_t nq = in[0].numel(), nk = in[1].numel();
    std::vector<std::vector<double>> out{std::vector<double>(nq), std::vector<double>(nk),
                                         std::vector<double>(nk),
                                         std::vector<double>(s_.B * s_.H * s_.T)};
    cpu::NaiveAttentionBwd(Shape(), NaiveOpts(ctx, dt), in[0].values.data(), in[1].values.data(),
                           in[2].values.data(), in[3].values.data(), in[4].values.data(),
                           out[0].data(), out[1].data(), out[2].data(), out[3].data());
    return out;
  }
};

// Decode: q [B, 1, H, D] against a K/V cache of Tk = s_.T rows.
class AttentionDecodeCase final : public AttentionCaseBase {
 public:
  using AttentionCaseBase::AttentionCaseBase;
  std::string Name() const override { return "attention_decode"; }
  std::string Vars() const override {
    return absl::StrCat("B=", s_.B, ",H=", s_.H, ",Hkv=", s_.Hkv, ",Tk=", s_.T, ",D=", s_.D);
  }
  OpDesc Desc() const override { return MakeDesc(Op::kAttentionDecode); }
  std::vector<TensorSpec> Inputs() const override {
    return {TensorSpec{"q", {s_.B, 1, s_.H, s_.D}}, TensorSpec{"Kcache", {s_.B, s_.T, s_.Hkv, s_.D}},
            TensorSpec{"Vcache", {s_.B, s_.T, s_.Hkv, s_.D}}};
  }
  std::vector<TensorSpec> Outputs() const override {
    return {TensorSpec{"o", {s_.B, 1, s_.H, s_.D}}};
  }
};

// Decode over a cache of capacity Tk = s_.T of which sequence b sees its first
// kv_length[b] rows (the 5th input; the 4th is the workspace): how a decode step runs so
// that it can be captured once and replayed (kernels/ops/kv_cache.h). Lengths: the
// whole cache for b = 0, then ragged ones that end inside a chunk and leave whole empty
// chunks after them; the rows past each length hold data that must not count.
class AttentionDecodeLengthCase final : public AttentionCaseBase {
 public:
  using AttentionCaseBase::AttentionCaseBase;
  std::string Name() const override { return "attention_decode"; }
  std::string Vars() const override {
    std::string v = absl::StrCat("B=", s_.B, ",H=", s_.H, ",Hkv=", s_.Hkv, ",Tk=", s_.T,
                                 ",D=", s_.D, ",kv_length=");
    for (int64_t b = 0; b < s_.B; ++b) absl::StrAppend(&v, b ? "/" : "", Length(b));
    return v;
  }
  OpDesc Desc() const override { return MakeDesc(Op::kAttentionDecode); }
  std::vector<TensorSpec> Inputs() const override {
    return {TensorSpec{"q", {s_.B, 1, s_.H, s_.D}}, TensorSpec{"Kcache", {s_.B, s_.T, s_.Hkv, s_.D}},
            TensorSpec{"Vcache", {s_.B, s_.T, s_.Hkv, s_.D}},
            TensorSpec("work", {AttentionDecodeWorkFloats(s_.B, s_.H, s_.T, s_.D)}, Role::kF32),
            TensorSpec("kv_length", {s_.B}, Role::kI32)};
  }
  std::vector<TensorSpec> Outputs() const override {
    return {TensorSpec{"o", {s_.B, 1, s_.H, s_.D}}};
  }
  void Fill(size_t index, std::mt19937_64& rng, HostTensor& t) const override {
    if (index != 4) return AttentionCaseBase::Fill(index, rng, t);
    for (int64_t b = 0; b < s_.B; ++b) t.values[b] = static_cast<double>(Length(b));
  }

 private:
  int64_t Length(int64_t b) const {
    return b == 0 ? s_.T : std::max<int64_t>(1, s_.T / (2 * b + 1) - 3);
  }
};

const AttnShape kShapes[] = {
    // B, T, H, Hkv, D, causal, fused, gpu_only
    {1, 1, 2, 2, 64, true},            {1, 1, 2, 2, 128, false},
    {2, 37, 4, 4, 64, true},           {2, 37, 4, 4, 64, false},
    {1, 129, 2, 2, 128, true},         {1, 129, 2, 2, 128, false},
    {1, 129, 2, 2, 64, true},          {2, 200, 8, 2, 64, true},
    {1, 200, 8, 2, 128, false},        {2, 77, 4, 4, 64, true, true},
    {1, 77, 8, 2, 128, false, true},   {2, 1000, 4, 4, 64, true},
    {1, 1000, 2, 2, 128, true},        {1, 4096, 4, 4, 64, true, false, true},
    {1, 4096, 2, 2, 128, true, false, true}, {1, 4096, 8, 2, 64, false, false, true},
    // One head of one instrument (the serving shape): on a GPU of ≥ 20 SMs the CUDA
    // forward runs split-KV (FlashFwdNumSplits: 20 query blocks, 3 splits of 7 key
    // blocks, the last ragged); the 4096 cases above split too on the H200.
    {1, 2500, 1, 1, 64, true},
    // Head dims the CUDA forward and backward run zero-padded on the 64/128 kernels
    // (head_dim_padding.h): ragged tiles, GQA, fused Q/K/V, a long causal row.
    {2, 129, 4, 2, 16, true},          {1, 200, 2, 2, 32, false},
    {1, 77, 4, 4, 96, true, true},     {1, 1000, 2, 2, 16, true},
    {1, 4096, 4, 4, 32, true, false, true},
    // D = 256 on its own tiles (flash_variants.cuh: 64×64 forward blocks, 32-row backward
    // query blocks under 64-key CTAs): T = 1, ragged tiles, GQA, fused Q/K/V, and on the
    // GPU a long causal row and one head at T = 2500 (split-KV).
    {1, 1, 2, 2, 256, true},           {1, 129, 2, 2, 256, true},
    {1, 200, 8, 2, 256, false},        {1, 77, 4, 4, 256, true, true},
    {1, 4096, 2, 2, 256, true, false, true}, {1, 2500, 1, 1, 256, true, false, true},
};

const AttnShape kDecodeShapes[] = {
    {1, 1, 2, 2, 64, true}, {2, 300, 8, 2, 64, true}, {1, 1000, 4, 4, 128, true},
    {1, 23400, 12, 12, 64, true, false, true},
    {2, 300, 4, 2, 16, true}, {1, 700, 2, 2, 32, true}, {1, 513, 2, 1, 96, true},
    {1, 23400, 4, 4, 16, true, false, true},
    {1, 700, 2, 1, 256, true}, {1, 23400, 4, 4, 256, true, false, true},
};

// Capacities of a decode cache (powers of two, as DecodeState grows) and one ragged.
const AttnShape kDecodeLengthShapes[] = {
    {3, 1024, 4, 2, 64, true}, {2, 512, 2, 2, 128, true}, {3, 700, 4, 4, 16, true},
    {1, 32768, 12, 12, 64, true, false, true}, {2, 256, 2, 1, 256, true},
};

}  // namespace

FT_PARITY_CASES(attention) {
  CaseList v;
  for (const auto& s : kShapes) v.push_back(std::make_unique<AttentionFwdCase>(s));
  for (const auto& s : kShapes) v.push_back(std::make_unique<AttentionBwdCase>(s));
  for (const auto& s : kDecodeShapes) v.push_back(std::make_unique<AttentionDecodeCase>(s));
  for (const auto& s : kDecodeLengthShapes)
    v.push_back(std::make_unique<AttentionDecodeLengthCase>(s));
  return v;
}

}  // namespace flashtick::parity
