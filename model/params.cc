// Parameter table, GPT-2 initialisation and device-resident weights (model/params.h).
#include "model/params.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {
namespace {

constexpr double kInitStd = 0.02;  // GPT-2 (Radford et al. 2019; llm.c)

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Uniform in (0, 1]: 53 random bits, never 0 so log() is finite.
double Uniform(uint64_t& state) {
  return (static_cast<double>(SplitMix64(state) >> 11) + 1.0) * 0x1.0p-53;
}

}  // namespace

int64_t ParamSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<ParamSpec> TransformerParamSpecs(const ModelConfig& c) {
  using I = ParamSpec::Init;
  const int64_t C = c.width, F = c.input_width(), D = c.head_dim();
  const int64_t W = (c.heads + 2 * int64_t{c.kv_heads}) * D, Hm = int64_t{c.mlp_ratio} * C;
  std::vector<ParamSpec> s = {{"embed.weight", {C, F}, I::kNormal}, {"embed.bias", {C}, I::kZeros}};
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = absl::StrCat("blocks.", l, ".");
    s.push_back({p + "ln1.weight", {C}, I::kOnes});
    s.push_back({p + "ln1.bias", {C}, I::kZeros});
    s.push_back({p + "attn.qkv.weight", {W, C}, I::kNormal});
    s.push_back({p + "attn.qkv.bias", {W}, I::kZeros});
    s.push_back({p + "attn.proj.weight", {C, C}, I::kResidualNormal});
    s.push_back({p + "attn.proj.bias", {C}, I::kZeros});
    s.push_back({p + "ln2.weight", {C}, I::kOnes});
    s.push_back({p + "ln2.bias", {C}, I::kZeros});
    s.push_back({p + "mlp.fc1.weight", {Hm, C}, I::kNormal});
    s.push_back({p + "mlp.fc1.bias", {Hm}, I::kZeros});
    s.push_back({p + "mlp.fc2.weight", {C, Hm}, I::kResidualNormal});
    s.push_back({p + "mlp.fc2.bias", {C}, I::kZeros});
  }
  s.push_back({"ln_f.weight", {C}, I::kOnes});
  s.push_back({"ln_f.bias", {C}, I::kZeros});
  s.push_back({"head.weight", {c.classes, C}, I::kNormal});
  s.push_back({"head.bias", {c.classes}, I::kZeros});
  return s;
}

std::vector<float> InitParam(const ParamSpec& spec, const ModelConfig& config, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(spec.numel()));
  double stddev = kInitStd;
  switch (spec.init) {
    case ParamSpec::Init::kZeros: return v;
    case ParamSpec::Init::kOnes:
      std::fill(v.begin(), v.end(), 1.0f);
      return v;
    case ParamSpec::Init::kResidualNormal:
      stddev = kInitStd / std::sqrt(2.0 * config.layers);  // GPT-2: residual paths add up
      break;
    case ParamSpec::Init::kNormal: break;
  }
  uint64_t state = seed ^ Fnv1a(spec.name);
  for (size_t i = 0; i < v.size(); i += 2) {
    // Box–Muller: two independent N(0, 1) from two uniforms.
    const double r = std::sqrt(-2.0 * std::log(Uniform(state)));
    const double a = 2.0 * M_PI * Uniform(state);
    v[i] = static_cast<float>(stddev * r * std::cos(a));
    if (i + 1 < v.size()) v[i + 1] = static_cast<float>(stddev * r * std::sin(a));
  }
  return v;
}

absl::StatusOr<std::unique_ptr<DeviceParams>> DeviceParams::Create(
    std::vector<ParamSpec> specs, const std::map<std::string, std::vector<float>>& host,
    Backend* backend, DType compute_dtype) {
  std::unique_ptr<DeviceParams> p(new DeviceParams(std::move(specs), backend));
  const DeviceKind dev = backend->device();
  for (const ParamSpec& spec : p->specs_) {
    auto it = host.find(spec.name);
    if (it == host.end() || it->second.size() != static_cast<size_t>(spec.numel()))
      return absl::InvalidArgumentError(absl::StrCat("model: no values for parameter ", spec.name));
    Entry e;
    const size_t bytes = it->second.size() * sizeof(float);
    ASSIGN_OR_RETURN(e.master_mem, backend->Allocate(bytes));
    RETURN_IF_ERROR(backend->Copy(e.master_mem.get(), dev, it->second.data(), DeviceKind::kCpu, bytes));
    e.master = MakeView(e.master_mem.get(), DType::kF32, dev, spec.shape.data(),
                        static_cast<int>(spec.shape.size()));
    const DType want = spec.shape.size() >= 2 ? compute_dtype : ParamDType(compute_dtype);
    if (want == DType::kF32) {
      e.compute_mem = e.master_mem;
      e.compute = e.master;
    } else {
      ASSIGN_OR_RETURN(e.compute_mem, backend->Allocate(static_cast<size_t>(spec.numel()) * DTypeSize(want)));
      e.compute = e.master;
      e.compute.data = e.compute_mem.get();
      e.compute.dtype = want;
      OpDesc cast;
      cast.op = Op::kCast;
      cast.dtype = DType::kF32;
      const TensorView in[] = {e.master}, out[] = {e.compute};
      RETURN_IF_ERROR(backend->Run(cast, in, out));
    }
    p->entries_[spec.name] = std::move(e);
  }
  return p;
}

const TensorView& DeviceParams::compute(const std::string& name) const {
  return entries_.at(name).compute;
}

const TensorView& DeviceParams::master(const std::string& name) const {
  return entries_.at(name).master;
}

absl::StatusOr<std::vector<float>> DeviceParams::MasterToHost(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return absl::NotFoundError(absl::StrCat("model: no parameter ", name));
  std::vector<float> out(static_cast<size_t>(it->second.master.numel()));
  RETURN_IF_ERROR(backend_->Synchronize());
  RETURN_IF_ERROR(backend_->Copy(out.data(), DeviceKind::kCpu, it->second.master.data,
                                 backend_->device(), out.size() * sizeof(float)));
  return out;
}

int64_t DeviceParams::parameter_count() const {
  int64_t n = 0;
  for (const ParamSpec& s : specs_) n += s.numel();
  return n;
}

}  // namespace flashtick
