// ModelInfer / metadata logic (see inference_core.h). Output bytes are the
// Transformer's host FP32 probabilities copied once into the response; a batch
// of requests runs as one forward (batched_predict.h) and is split back here.
#include "server/inference/inference_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/inference/batched_predict.h"
#include "server/inference/forward_window.h"

namespace flashtick {
namespace {

constexpr char kServerName[] = "flashtick";
#ifndef FLASHTICK_VERSION
#define FLASHTICK_VERSION "unknown"
#endif
constexpr char kServerVersion[] = FLASHTICK_VERSION;  // CMake PROJECT_VERSION
constexpr char kPlatform[] = "flashtick_transformer";

void SetStringParameter(google::protobuf::Map<std::string, inference::InferParameter>* params,
                        const std::string& key, const std::string& value) {
  (*params)[key].set_string_param(value);
}

}  // namespace

InferenceCore::InferenceCore(const ModelRepository* repository, int64_t max_seq_len,
                             int64_t max_request_rows)
    : repository_(repository), max_seq_len_(max_seq_len), max_request_rows_(max_request_rows) {}

int64_t InferenceCore::MaxSteps(const ModelEntry& model) const {
  return std::min<int64_t>(max_seq_len_, model.max_context);
}

std::string InferenceCore::ModelLabel(absl::string_view name) const {
  return repository_->Versions(name).empty() ? std::string() : std::string(name);
}

absl::StatusOr<InferenceCore::Prepared> InferenceCore::Prepare(
    inference::ModelInferRequest* mutable_request) const {
  const inference::ModelInferRequest& request = *mutable_request;
  Prepared prepared;
  ASSIGN_OR_RETURN(prepared.model, repository_->Find(request.model_name(), request.model_version()));
  InferLimits limits;
  limits.features = prepared.model->features;
  limits.max_steps = MaxSteps(*prepared.model);
  limits.max_rows = max_request_rows_;
  ASSIGN_OR_RETURN(prepared.input, ValidateModelInfer(mutable_request, limits));
  prepared.id = request.id();
  return prepared;
}

int64_t InferenceCore::QueuedBytes(const Prepared& prepared,
                                   const inference::ModelInferRequest& request) {
  return prepared.input.HeldBytes() + static_cast<int64_t>(request.ByteSizeLong());
}

absl::Status InferenceCore::Run(const Prepared& prepared,
                                inference::ModelInferResponse* response) const {
  const Prepared* one[] = {&prepared};
  inference::ModelInferResponse* out[] = {response};
  return RunBatch(one, out, nullptr);
}

absl::Status InferenceCore::RunBatch(absl::Span<const Prepared* const> batch,
                                     absl::Span<inference::ModelInferResponse* const> responses,
                                     BatchCost* cost,
                                     const std::function<bool()>& abandoned) const {
  if (batch.empty() || batch.size() != responses.size()) {
    return absl::InternalError(absl::StrCat("RunBatch got ", batch.size(), " requests and ",
                                            responses.size(), " responses; this is a bug"));
  }
  const ModelEntry& model = *batch.front()->model;
  if (model.model == nullptr) {
    return absl::InternalError(absl::StrCat("model '", model.name, "' has no loaded weights"));
  }
  std::vector<BatchedRequest> requests;
  requests.reserve(batch.size());
  for (const Prepared* prepared : batch) {
    if (prepared->model.get() != &model) {
      return absl::InternalError("a batch mixes model versions; this is a bug");
    }
    const ValidatedInfer& in = prepared->input;
    requests.push_back({in.ticks(), in.batch, in.steps, in.last_only});
  }
  const ForwardWindow window(*model.model->backend());
  ASSIGN_OR_RETURN(std::vector<std::vector<float>> probs,
                   PredictBatched(model.model.get(), requests, abandoned));
  const double seconds = window.seconds();
  if (cost != nullptr) *cost = {seconds, window.peak_bytes()};
  for (size_t i = 0; i < batch.size(); ++i) {
    RETURN_IF_ERROR(FillResponse(*batch[i], std::move(probs[i]), seconds, responses[i]));
  }
  return absl::OkStatus();
}

absl::Status InferenceCore::FillResponse(const Prepared& prepared, std::vector<float> probs,
                                         double compute_seconds,
                                         inference::ModelInferResponse* response) const {
  const ModelEntry& model = *prepared.model;
  const ValidatedInfer& in = prepared.input;
  const int64_t out_steps = in.last_only ? 1 : in.steps;
  const int64_t expected = in.batch * out_steps * model.classes;
  if (static_cast<int64_t>(probs.size()) != expected) {
    return absl::InternalError(absl::StrCat("model '", model.name, "' returned ", probs.size(),
                                            " probabilities, expected ", expected,
                                            " (B × steps × classes); this is a bug"));
  }
  response->set_model_name(model.name);
  response->set_model_version(model.version_string());
  response->set_id(prepared.id);
  auto* params = response->mutable_parameters();
  SetStringParameter(params, kKernelPathParameter, model.kernel_path);
  SetStringParameter(params, kDeviceParameter, model.device);
  // The batch's forward time: requests batched together report the same figure.
  // compute_microseconds is an int64_param, a type of the KServe v2 protocol itself;
  // compute_seconds (double_param) is Triton's extension, kept for its clients.
  (*params)["compute_microseconds"].set_int64_param(
      static_cast<int64_t>(std::llround(compute_seconds * 1e6)));
  (*params)["compute_seconds"].set_double_param(compute_seconds);
  auto* output = response->add_outputs();
  output->set_name(kProbsOutputName);
  output->set_datatype(kFp32Datatype);
  output->add_shape(in.batch);
  output->add_shape(out_steps);
  output->add_shape(model.classes);
  if (in.raw_output) {
    response->add_raw_output_contents()->assign(reinterpret_cast<const char*>(probs.data()),
                                                probs.size() * sizeof(float));
  } else {
    output->mutable_contents()->mutable_fp32_contents()->Assign(probs.begin(), probs.end());
  }
  return absl::OkStatus();
}

absl::StatusOr<inference::ModelMetadataResponse> InferenceCore::ModelMetadata(
    const inference::ModelMetadataRequest& request) const {
  ASSIGN_OR_RETURN(ModelEntryPtr model, repository_->Find(request.name(), request.version()));
  inference::ModelMetadataResponse response;
  response.set_name(model->name);
  for (const std::string& version : repository_->Versions(model->name)) {
    response.add_versions(version);
  }
  response.set_platform(kPlatform);
  auto* input = response.add_inputs();
  input->set_name(kTicksInputName);
  input->set_datatype(kFp32Datatype);
  for (int64_t dim : {int64_t{-1}, int64_t{-1}, int64_t{model->features}}) input->add_shape(dim);
  auto* output = response.add_outputs();
  output->set_name(kProbsOutputName);
  output->set_datatype(kFp32Datatype);
  for (int64_t dim : {int64_t{-1}, int64_t{-1}, int64_t{model->classes}}) output->add_shape(dim);
  return response;
}

inference::ServerMetadataResponse InferenceCore::ServerMetadata() const {
  inference::ServerMetadataResponse response;
  response.set_name(kServerName);
  response.set_version(kServerVersion);
  return response;
}

inference::RepositoryIndexResponse InferenceCore::RepositoryIndex() const {
  inference::RepositoryIndexResponse response;
  for (const ModelEntryPtr& entry : repository_->Entries()) {
    auto* model = response.add_models();
    model->set_name(entry->name);
    model->set_version(entry->version_string());
    if (entry->unavailable_reason.empty()) {
      model->set_state("READY");
    } else {
      model->set_state("UNAVAILABLE");  // Triton's state and reason for a model that failed to load
      model->set_reason(entry->unavailable_reason);
    }
  }
  return response;
}

bool InferenceCore::ModelReady(const inference::ModelReadyRequest& request) const {
  auto model = repository_->Find(request.name(), request.version());
  return model.ok() && (*model)->model != nullptr;
}

}  // namespace flashtick
