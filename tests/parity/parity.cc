// The parity runner: case registry, tensor materialisation on any backend (strided
// buffers with NaN-poisoned gaps, dtype conversion on the host), the cached fp64 CPU
// reference, and the comparison (NaN/Inf first, then nmse, then the FlashAttention
// bound where the case supplies a naive low-precision result).
#include "tests/parity/parity.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/common/half.h"

namespace flashtick::parity {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// 64 fp32 half-ulps (2^-18): the rounding noise of a length-64 fp32 reduction.
constexpr double kUlpSlack = 64.0 * 5.9604644775390625e-08;

struct Registry {
  std::vector<CaseList (*)()> factories;
  CaseList cases;
  bool built = false;
};

Registry& GetRegistry() {
  static Registry r;
  return r;
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> StridesOf(const TensorSpec& spec) {
  if (!spec.strides.empty()) return spec.strides;
  std::vector<int64_t> st(spec.shape.size());
  int64_t s = 1;
  for (int i = static_cast<int>(spec.shape.size()) - 1; i >= 0; --i) st[i] = s, s *= spec.shape[i];
  return st;
}

// Elements the strided buffer spans: 1 + Σ (shape_i − 1)·stride_i.
int64_t Span(const TensorSpec& spec) {
  if (Numel(spec.shape) == 0) return 0;
  const auto st = StridesOf(spec);
  int64_t span = 1;
  for (size_t i = 0; i < spec.shape.size(); ++i) span += (spec.shape[i] - 1) * st[i];
  return span;
}

// fn(logical_index, buffer_offset) over the row-major logical order.
template <typename Fn>
void ForEachElement(const TensorSpec& spec, Fn fn) {
  const auto st = StridesOf(spec);
  const int rank = static_cast<int>(spec.shape.size());
  const int64_t n = Numel(spec.shape);
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t l = 0; l < n; ++l) {
    fn(l, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < spec.shape[d]) {
        off += st[d];
        break;
      }
      off -= (spec.shape[d] - 1) * st[d];
      idx[d] = 0;
    }
  }
}

void Encode(DType dt, double x, uint8_t* p) {
  switch (dt) {
    case DType::kF32: { const float f = static_cast<float>(x); std::memcpy(p, &f, 4); break; }
    case DType::kF64: std::memcpy(p, &x, 8); break;
    case DType::kBF16: { const uint16_t h = DoubleToBf16Bits(x); std::memcpy(p, &h, 2); break; }
    case DType::kF16: { const uint16_t h = DoubleToHalfBits(x); std::memcpy(p, &h, 2); break; }
    case DType::kI32: {
      const int32_t i = std::isnan(x) ? std::numeric_limits<int32_t>::max()
                                      : static_cast<int32_t>(std::floor(x));
      std::memcpy(p, &i, 4);
      break;
    }
  }
}

double Decode(DType dt, const uint8_t* p) {
  switch (dt) {
    case DType::kF32: { float f; std::memcpy(&f, p, 4); return f; }
    case DType::kF64: { double d; std::memcpy(&d, p, 8); return d; }
    case DType::kBF16: { uint16_t h; std::memcpy(&h, p, 2); return Bf16BitsToFloat(h); }
    case DType::kF16: { uint16_t h; std::memcpy(&h, p, 2); return HalfBitsToFloat(h); }
    case DType::kI32: { int32_t i; std::memcpy(&i, p, 4); return i; }
  }
  return kNaN;
}

// One tensor placed on a backend's device.
struct Placed {
  TensorSpec spec;
  DType dtype;
  std::shared_ptr<void> mem;
  TensorView view;
};

absl::StatusOr<Placed> Place(Backend& b, const TensorSpec& spec, DType dt,
                             const std::vector<double>* values) {
  Placed p{spec, dt, nullptr, {}};
  const size_t esize = DTypeSize(dt);
  const int64_t span = Span(spec);
  std::vector<uint8_t> host(static_cast<size_t>(span) * esize);
  for (int64_t i = 0; i < span; ++i) Encode(dt, kNaN, &host[i * esize]);  // poison gaps
  if (values)
    ForEachElement(spec, [&](int64_t l, int64_t off) { Encode(dt, (*values)[l], &host[off * esize]); });
  ASSIGN_OR_RETURN(p.mem, b.Allocate(std::max<size_t>(host.size(), 1)));
  RETURN_IF_ERROR(b.Copy(p.mem.get(), b.device(), host.data(), DeviceKind::kCpu, host.size()));
  const auto st = StridesOf(spec);
  p.view.data = p.mem.get();
  p.view.dtype = dt;
  p.view.device = b.device();
  p.view.rank = static_cast<int>(spec.shape.size());
  for (int i = 0; i < p.view.rank; ++i) p.view.shape[i] = spec.shape[i], p.view.strides[i] = st[i];
  return p;
}

absl::StatusOr<std::vector<double>> Fetch(Backend& b, const Placed& p) {
  const size_t esize = DTypeSize(p.dtype);
  std::vector<uint8_t> host(static_cast<size_t>(Span(p.spec)) * esize);
  RETURN_IF_ERROR(b.Copy(host.data(), DeviceKind::kCpu, p.mem.get(), b.device(), host.size()));
  std::vector<double> out(Numel(p.spec.shape));
  ForEachElement(p.spec, [&](int64_t l, int64_t off) { out[l] = Decode(p.dtype, &host[off * esize]); });
  return out;
}

// Runs the case's op on `b` in `dtype`; returns every output in fp64.
absl::StatusOr<std::vector<std::vector<double>>> RunOn(const TestCase& test, Backend& b,
                                                       DType dtype,
                                                       const std::vector<HostTensor>& inputs,
                                                       const std::vector<HostTensor>& out_init) {
  OpDesc desc = test.Desc();
  desc.dtype = dtype;
  std::vector<Placed> ins, outs;
  std::vector<TensorView> in_views, out_views;
  for (const auto& t : inputs) {
    ASSIGN_OR_RETURN(Placed p, Place(b, t.spec, test.TensorDType(t.spec, dtype), &t.values));
    in_views.push_back(p.view);
    ins.push_back(std::move(p));
  }
  for (const auto& t : out_init) {
    ASSIGN_OR_RETURN(Placed p, Place(b, t.spec, test.TensorDType(t.spec, dtype),
                                     t.spec.accumulate ? &t.values : nullptr));
    out_views.push_back(p.view);
    outs.push_back(std::move(p));
  }
  RETURN_IF_ERROR(b.Run(desc, in_views, out_views));
  RETURN_IF_ERROR(b.Synchronize());
  std::vector<std::vector<double>> result;
  for (const auto& p : outs) {
    ASSIGN_OR_RETURN(auto v, Fetch(b, p));
    result.push_back(std::move(v));
  }
  return result;
}

HostTensor Generate(const TestCase& test, const TensorSpec& spec, size_t index, uint64_t salt) {
  HostTensor t{spec, std::vector<double>(Numel(spec.shape))};
  std::mt19937_64 rng(Fnv1a(test.Label()) ^ (salt + index * 0x9E3779B97F4A7C15ull));
  test.Fill(index, rng, t);
  return t;
}

// The fp64 reference of one case: inputs, output initial values, reference outputs,
// and the naive low-precision outputs per dtype.
struct Reference {
  absl::Status status;
  std::vector<HostTensor> inputs, out_init;
  std::vector<std::vector<double>> outputs;
  std::map<DType, absl::StatusOr<std::vector<std::vector<double>>>> naive;
};

std::mutex ref_mu;
std::map<const TestCase*, std::unique_ptr<Reference>> ref_cache;

Reference& GetReference(const TestCase& test, ParityContext& ctx) {
  std::lock_guard<std::mutex> lock(ref_mu);
  auto& slot = ref_cache[&test];
  if (slot) return *slot;
  slot = std::make_unique<Reference>();
  Reference& r = *slot;
  const auto in_specs = test.Inputs();
  const auto out_specs = test.Outputs();
  for (size_t i = 0; i < in_specs.size(); ++i) r.inputs.push_back(Generate(test, in_specs[i], i, 0));
  for (size_t i = 0; i < out_specs.size(); ++i)
    r.out_init.push_back(Generate(test, out_specs[i], i, 0x5EED));
  r.status = test.Prepare(ctx, r.inputs);
  if (!r.status.ok()) return r;
  auto out = RunOn(test, *ctx.cpu, DType::kF64, r.inputs, r.out_init);
  if (!out.ok()) {
    r.status = out.status();
    return r;
  }
  r.outputs = std::move(*out);
  return r;
}

std::string Fmt(double x) { return absl::StrFormat("%.2e", x); }

}  // namespace

int64_t HostTensor::numel() const { return Numel(spec.shape); }

void TestCase::Fill(size_t index, std::mt19937_64& rng, HostTensor& t) const {
  std::uniform_real_distribution<double> u(t.spec.lo, t.spec.hi);
  for (auto& v : t.values) v = t.spec.role == Role::kI32 ? std::floor(u(rng)) : u(rng);
}

double TestCase::MaxNmse(DType dtype, size_t output) const {
  switch (dtype) {
    case DType::kBF16: return 1e-4;
    case DType::kF16: return 1e-5;
    default: return 1e-7;
  }
}

DType TestCase::TensorDType(const TensorSpec& spec, DType run) const {
  const bool half = run == DType::kBF16 || run == DType::kF16;
  switch (spec.role) {
    case Role::kData: return run;
    case Role::kStat: return half ? DType::kF32 : run;
    case Role::kF32: return run == DType::kF64 ? DType::kF64 : DType::kF32;
    case Role::kI32: return DType::kI32;
  }
  return run;
}

bool RegisterCases(const char* group, CaseList (*factory)()) {
  GetRegistry().factories.push_back(factory);
  return true;
}

const CaseList& AllCases() {
  Registry& r = GetRegistry();
  if (!r.built) {
    for (auto f : r.factories)
      for (auto& c : f()) r.cases.push_back(std::move(c));
    r.built = true;
  }
  return r.cases;
}

CaseResult RunCase(const TestCase& test, Backend& target, DType dtype, ParityContext& ctx) {
  CaseResult res;
  std::string head =
      absl::StrCat(test.Label(), " [", target.name(), " ", DTypeName(dtype), "]: ");
  auto finish = [&](Verdict v, std::string detail) {
    res.verdict = v;
    res.detail = detail;
    const char* word = v == Verdict::kOk ? "OK" : v == Verdict::kFail ? "FAIL" : "SKIP";
    res.line = absl::StrCat(head, word, detail.empty() ? "" : " ", detail);
    return res;
  };
  if (test.GpuOnly() && target.device() == DeviceKind::kCpu)
    return finish(Verdict::kSkip, "(long shape: GPU targets only)");
  OpDesc desc = test.Desc();
  desc.dtype = dtype;
  if (!target.Supports(desc))
    return finish(Verdict::kSkip, absl::StrCat("(", target.name(), " does not support ", desc.DebugString(), ")"));

  Reference& ref = GetReference(test, ctx);
  if (!ref.status.ok())
    return finish(absl::IsUnimplemented(ref.status) ? Verdict::kSkip : Verdict::kFail,
                  absl::StrCat("(cpu fp64 reference: ", ref.status.message(), ")"));
  auto got = RunOn(test, target, dtype, ref.inputs, ref.out_init);
  // The GPU attention forward and backward run ours or cuDNN's (kernels/attention_dispatch.h):
  // name the one that ran, so a cuDNN pass is visible as such.
  if (got.ok() && target.device() == DeviceKind::kCuda &&
      (desc.op == Op::kAttentionFwd || desc.op == Op::kAttentionBwd))
    head = absl::StrCat(test.Label(), " [", target.name(), " ", DTypeName(dtype), " ",
                        target.KernelPath(desc), "]: ");
  if (!got.ok())
    return finish(absl::IsUnimplemented(got.status()) ? Verdict::kSkip : Verdict::kFail,
                  absl::StrCat("(", got.status().ToString(), ")"));

  // Naive outputs in the target's precision for the FlashAttention bound. Applied to
  // fp32 runs too: nmse averages a single wrong element away, the max-error bound not.
  const std::vector<std::vector<double>>* naive = nullptr;
  if (dtype != DType::kF64) {
    std::lock_guard<std::mutex> lock(ref_mu);
    auto it = ref.naive.find(dtype);
    if (it == ref.naive.end())
      it = ref.naive.emplace(dtype, test.NaiveLowPrecision(ctx, dtype, ref.inputs)).first;
    if (!it->second.ok())
      return finish(Verdict::kFail, absl::StrCat("(naive ", DTypeName(dtype), ": ",
                                                 it->second.status().message(), ")"));
    if (!it->second->empty()) naive = &*it->second;
  }

  const auto out_specs = test.Outputs();
  std::string fail, bound_note;
  double worst_nmse = 0.0, worst_ratio = 0.0;
  for (size_t o = 0; o < out_specs.size(); ++o) {
    if (!out_specs[o].compare) continue;
    const auto& x = (*got)[o];
    const auto& r = ref.outputs[o];
    int64_t nonfinite = 0;
    double err2 = 0.0, ref2 = 0.0, max_err = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < r.size(); ++i) {
      if (!std::isfinite(r[i])) {  // e.g. L = −inf: the target must agree exactly
        if (!(x[i] == r[i] || (std::isnan(x[i]) && std::isnan(r[i])))) ++nonfinite;
        continue;
      }
      if (!std::isfinite(x[i])) {
        ++nonfinite;
        continue;
      }
      const double e = x[i] - r[i];
      err2 += e * e;
      ref2 += r[i] * r[i];
      max_ref = std::max(max_ref, std::fabs(r[i]));
      max_err = std::max(max_err, std::fabs(e));
    }
    const std::string& name = out_specs[o].name;
    if (nonfinite > 0) {
      absl::StrAppend(&fail, " ", name, ": ", nonfinite, " NaN/Inf values where the reference is finite (or differs);");
      continue;
    }
    const double nmse = ref2 > 0.0 ? err2 / ref2 : err2;  // all-zero reference: plain MSE·n
    worst_nmse = std::max(worst_nmse, nmse);
    const bool bounded = naive && o < naive->size() && !(*naive)[o].empty();
    // fp32 noise at the output's scale (see the bound below).
    const double slack = kUlpSlack * std::max({1.0, max_ref, test.RoundingScale()});
    // An output that is exactly 0 in exact arithmetic (T = 1 backward-over-backward: ∂Q,
    // ∂K, ∂V, since dS ≡ 0) has an fp64 reference made of rounding residue, RMS far
    // below the slack; nmse against residue is noise over noise (the H200 printed 2.5
    // for D = 128 with max errors inside the bound). Such outputs are held to the
    // absolute max-error bound alone; without a naive bound nmse still applies.
    const bool residue_reference = bounded && std::sqrt(ref2 / std::max<size_t>(r.size(), 1)) < slack;
    if (!residue_reference && nmse > test.MaxNmse(dtype, o))
      absl::StrAppend(&fail, " ", name, ": nmse ", Fmt(nmse), " > ", Fmt(test.MaxNmse(dtype, o)), ";");
    if (bounded) {
      double naive_err = 0.0;
      for (size_t i = 0; i < r.size(); ++i)
        if (std::isfinite(r[i])) naive_err = std::max(naive_err, std::fabs((*naive)[o][i] - r[i]));
      // FlashAttention's test bound: twice the naive implementation's error in the same
      // precision, plus fp32 noise at the output's scale. The slack covers outputs the
      // naive code gets exactly (T = 1: dS = dP − D = 0 when both dot products run in
      // one order, while a kernel's D pre-pass and its MMA sum in different orders).
      if (max_err > 2.0 * naive_err + slack)
        absl::StrAppend(&fail, " ", name, ": max_err ", Fmt(max_err), " > 2 x naive ",
                        DTypeName(dtype), " max_err ", Fmt(naive_err), ";");
      const double ratio = naive_err > 0 ? max_err / naive_err : (max_err > 0 ? INFINITY : 0.0);
      worst_ratio = std::max(worst_ratio, ratio);
    }
  }
  res.nmse = worst_nmse;
  if (naive) bound_note = absl::StrCat(" err/naive_err=", absl::StrFormat("%.2f", worst_ratio));
  if (!fail.empty()) return finish(Verdict::kFail, absl::StrCat("nmse=", Fmt(worst_nmse), bound_note, ";", fail));
  return finish(Verdict::kOk, absl::StrCat("nmse=", Fmt(worst_nmse), bound_note));
}

}  // namespace flashtick::parity
