// Transformer: construction (random init or a checkpoint), Save, and Predict, which
// validates the request and runs the forward in batch chunks that fit the workspace
// budget (model/transformer_forward.cc does the math).
#include "model/transformer.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"
#include "common/file_io.h"
#include "common/finite.h"
#include "model/safetensors.h"
#include "model/transformer_impl.h"

namespace flashtick {
namespace {

constexpr char kConfigFile[] = "config.json";
constexpr char kWeightsFile[] = "model.safetensors";

absl::StatusOr<DType> ChooseDType(Backend* backend, const ModelOptions& options) {
  const DType dt = options.compute_dtype.value_or(
      backend->device() == DeviceKind::kCuda ? DType::kBF16 : DType::kF32);
  OpDesc probe;
  probe.op = Op::kMatmul;
  probe.dtype = dt;
  if (!backend->Supports(probe))
    return absl::InvalidArgumentError(absl::StrCat("backend ", backend->name(),
                                                   " cannot run the model in ", DTypeName(dt)));
  return dt;
}

}  // namespace

Transformer::Transformer(ModelConfig config, Backend* backend)
    : config_(std::move(config)), backend_(backend), impl_(std::make_unique<Impl>()) {}

Transformer::~Transformer() = default;

absl::StatusOr<std::unique_ptr<Transformer>> Transformer::InitRandom(const ModelConfig& config,
                                                                     uint64_t seed, Backend* backend) {
  return InitRandom(config, seed, backend, ModelOptions{});
}

absl::StatusOr<std::unique_ptr<Transformer>> Transformer::InitRandom(const ModelConfig& config,
                                                                     uint64_t seed, Backend* backend,
                                                                     const ModelOptions& options) {
  if (backend == nullptr) return absl::InvalidArgumentError("model: no backend");
  RETURN_IF_ERROR(config.Validate());
  ASSIGN_OR_RETURN(DType act, ChooseDType(backend, options));
  std::vector<ParamSpec> specs = TransformerParamSpecs(config);
  std::map<std::string, std::vector<float>> host;
  for (const ParamSpec& s : specs) host[s.name] = InitParam(s, config, seed);
  std::unique_ptr<Transformer> m(new Transformer(config, backend));
  m->impl_->act = act;
  m->impl_->options = options;
  ASSIGN_OR_RETURN(m->impl_->params, DeviceParams::Create(std::move(specs), host, backend, act));
  return m;
}

absl::StatusOr<std::unique_ptr<Transformer>> Transformer::Load(const std::string& dir,
                                                               Backend* backend) {
  return Load(dir, backend, ModelOptions{});
}

absl::StatusOr<std::unique_ptr<Transformer>> Transformer::Load(const std::string& dir,
                                                               Backend* backend,
                                                               const ModelOptions& options) {
  if (backend == nullptr) return absl::InvalidArgumentError("model: no backend");
  ASSIGN_OR_RETURN(std::string json, ReadFileToString(absl::StrCat(dir, "/", kConfigFile)));
  absl::StatusOr<ModelConfig> config = ModelConfig::FromJson(json);
  if (!config.ok())
    return absl::Status(config.status().code(),
                        absl::StrCat(dir, "/", kConfigFile, ": ", config.status().message()));
  ASSIGN_OR_RETURN(DType act, ChooseDType(backend, options));
  const std::string weights_path = absl::StrCat(dir, "/", kWeightsFile);
  ASSIGN_OR_RETURN(Safetensors st, Safetensors::ReadFile(weights_path));
  std::vector<ParamSpec> specs = TransformerParamSpecs(*config);
  std::set<std::string> expected;
  std::map<std::string, std::vector<float>> host;
  for (const ParamSpec& s : specs) {
    expected.insert(s.name);
    absl::StatusOr<std::vector<float>> v = st.ToFloat32(s.name, s.shape);
    if (!v.ok())
      return absl::InvalidArgumentError(absl::StrCat(
          weights_path, " does not match ", kConfigFile, ": ", v.status().message()));
    if (!AllFinite(v->data(), v->size()))
      return absl::InvalidArgumentError(
          absl::StrCat(weights_path, ": tensor '", s.name, "' holds NaN or Inf"));
    host[s.name] = std::move(*v);
  }
  for (const auto& [name, t] : st.tensors())
    if (!expected.count(name))
      return absl::InvalidArgumentError(absl::StrCat(weights_path, " has tensor '", name,
                                                     "', which a model with this config.json lacks"));
  std::unique_ptr<Transformer> m(new Transformer(*config, backend));
  m->impl_->act = act;
  m->impl_->options = options;
  ASSIGN_OR_RETURN(m->impl_->params, DeviceParams::Create(std::move(specs), host, backend, act));
  return m;
}

absl::Status Transformer::Save(const std::string& dir) const {
  RETURN_IF_ERROR(MakeDirs(dir));
  Safetensors st;
  st.metadata()["format"] = "pt";  // what Hugging Face loaders expect
  st.metadata()["flashtick_config"] = config_.ToJson();
  for (const ParamSpec& s : impl_->params->specs()) {
    ASSIGN_OR_RETURN(std::vector<float> v, impl_->params->MasterToHost(s.name));
    RETURN_IF_ERROR(st.Add(s.name, DType::kF32, s.shape, v.data()));
  }
  // Weights first: a reader that finds the new config.json also finds matching weights
  // unless the second write fails, which Load reports as a mismatch.
  RETURN_IF_ERROR(st.WriteFile(absl::StrCat(dir, "/", kWeightsFile)));
  return WriteFileAtomic(absl::StrCat(dir, "/", kConfigFile), config_.ToJson() + "\n");
}

absl::Status CheckForwardShape(const ModelConfig& c, size_t values, int64_t B, int64_t T,
                               const char* what) {
  const int64_t F = c.features;
  if (B < 1 || T < 1)
    return absl::InvalidArgumentError(absl::StrCat(what, ": B and T must be >= 1, got B=", B, ", T=", T));
  if (T > c.max_context)
    return absl::ResourceExhaustedError(absl::StrCat(what, ": T=", T, " exceeds the model's max_context of ",
                                                     c.max_context));
  if (B > (int64_t{1} << 40) / (T * F) || static_cast<int64_t>(values) != B * T * F)
    return absl::InvalidArgumentError(absl::StrCat(what, ": ticks has ", values,
                                                   " values; [B=", B, ", T=", T, ", F=", F,
                                                   "] needs ", B * T * F));
  return absl::OkStatus();
}

absl::Status CheckForwardInput(const ModelConfig& c, absl::Span<const float> ticks, int64_t B,
                               int64_t T, const char* what) {
  RETURN_IF_ERROR(CheckForwardShape(c, ticks.size(), B, T, what));
  const int64_t F = c.features;
  if (AllFinite(ticks.data(), ticks.size())) return absl::OkStatus();
  for (size_t i = 0; i < ticks.size(); ++i)  // there is a bad one: name where
    if (!std::isfinite(ticks[i]))
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": tick feature ", i % F, " of step ", (i / F) % T, " in sequence ", i / (F * T),
          " is NaN or Inf"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> Transformer::Predict(absl::Span<const float> ticks, int64_t B,
                                                        int64_t T, bool last_only) {
  return Predict(ticks, B, T, last_only, {});
}

absl::StatusOr<std::vector<float>> Transformer::Predict(absl::Span<const float> ticks, int64_t B,
                                                        int64_t T, bool last_only,
                                                        const std::function<bool()>& stop) {
  // The shape first, so a bad one is refused before the output is allocated.
  RETURN_IF_ERROR(CheckForwardShape(config_, ticks.size(), B, T, "predict"));
  std::vector<float> probs(static_cast<size_t>(B * (last_only ? 1 : T) * config_.classes));
  RETURN_IF_ERROR(PredictInto(ticks, B, T, last_only, stop, absl::MakeSpan(probs)));
  return probs;
}

absl::Status Transformer::PredictInto(absl::Span<const float> ticks, int64_t B, int64_t T,
                                      bool last_only, const std::function<bool()>& stop,
                                      absl::Span<float> probs, int64_t valid_steps) {
  const int64_t F = config_.features, K = config_.classes;
  RETURN_IF_ERROR(CheckForwardInput(config_, ticks, B, T, "predict"));
  if (valid_steps < 0 || valid_steps > T || (valid_steps > 0 && !last_only)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "predict: ", valid_steps, " real steps of ", T,
        " need 0 (none padded) or 1..T, and only a last-step forward takes them"));
  }
  const int64_t out_steps = last_only ? 1 : T;
  if (static_cast<int64_t>(probs.size()) != B * out_steps * K) {
    return absl::InvalidArgumentError(absl::StrCat("predict: the output has room for ",
                                                   probs.size(), " values; [B=", B, ", ",
                                                   out_steps, ", K=", K, "] needs ",
                                                   B * out_steps * K));
  }
  std::lock_guard<std::mutex> lock(mu_);
  // Whole sequences per chunk, as many as the workspace budget allows (at least one).
  const size_t per_seq =
      ForwardWorkspace::Carve(nullptr, backend_->device(), config_, impl_->act, 1, T, last_only).bytes;
  const int64_t Bc = std::clamp<int64_t>(
      impl_->options.workspace_bytes / static_cast<int64_t>(std::max<size_t>(per_seq, 1)), 1, B);
  for (int64_t b0 = 0; b0 < B; b0 += Bc) {
    const int64_t n = std::min(Bc, B - b0);
    RETURN_IF_ERROR(impl_->ForwardChunk(config_, backend_, ticks.data() + b0 * T * F, n, T,
                                        last_only, probs.data() + b0 * out_steps * K, stop,
                                        {}, valid_steps));
  }
  return absl::OkStatus();
}

std::string Transformer::kernel_path() const {
  OpDesc d;
  d.op = Op::kAttentionFwd;
  d.dtype = impl_->act;
  d.attention.causal = true;
  d.attention.head_dim = config_.head_dim();  // the backend names the variant by D
  return backend_->KernelPath(d);
}

absl::Status Transformer::CheckServable() const {
  for (Op op : {Op::kAttentionFwd, Op::kAttentionDecode}) {
    OpDesc d;
    d.op = op;
    d.dtype = impl_->act;
    d.attention.causal = true;
    d.attention.head_dim = config_.head_dim();
    if (!backend_->Supports(d)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the ", backend_->name(), " backend has no ", OpName(op), " kernel for head dim ",
          config_.head_dim(), " (width ", config_.width, " / ", config_.heads, " heads) in ",
          DTypeName(impl_->act), "; kernel path ", backend_->KernelPath(d),
          ". Make the model with a head dim the backend runs (docs/kernels/head_dims.md)"));
    }
  }
  return absl::OkStatus();
}

int64_t Transformer::parameter_count() const { return impl_->params->parameter_count(); }

DType Transformer::compute_dtype() const { return impl_->act; }

const DeviceParams& Transformer::params() const { return *impl_->params; }

}  // namespace flashtick
