// ModelInfer / metadata logic (see inference_core.h). The response's output
// buffer is sized before the forward, which writes the host FP32 probabilities
// straight into it (batched_predict.h lists every copy of a request's bytes).
#include "server/inference/inference_core.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
                             int64_t max_request_rows, int64_t pad_length_to,
                             HostStagingPool* staging)
    : repository_(repository),
      max_seq_len_(max_seq_len),
      max_request_rows_(max_request_rows),
      pad_length_to_(pad_length_to),
      staging_(staging) {}

int64_t InferenceCore::MaxSteps(const ModelEntry& model) const {
  return std::min<int64_t>(max_seq_len_, model.max_context);
}

std::vector<int64_t> InferenceCore::ForwardLengths(const ModelEntry& model) const {
  std::vector<int64_t> lengths;
  if (pad_length_to_ <= 1) return lengths;
  const int64_t last = PaddedLength(MaxSteps(model), pad_length_to_, model.max_context);
  for (int64_t L = pad_length_to_;; L += pad_length_to_) {
    lengths.push_back(std::min(L, last));
    if (L >= last) break;
  }
  return lengths;
}

absl::StatusOr<int64_t> InferenceCore::WarmUp(const ModelEntry& model, int64_t max_rows) const {
  if (model.model == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("model '", model.name, "' has no loaded weights"));
  }
  int64_t forwards = 0;
  for (int64_t L : ForwardLengths(model)) {
    const int64_t most = std::min(std::max<int64_t>(max_rows, 1), std::max<int64_t>(1, kChunkTokens / L));
    for (int64_t B = 1; B <= most; ++B) {
      const std::vector<float> zeros(static_cast<size_t>(B * L * model.features), 0.0f);
      // Both forwards a request can take: every step, and the last step only (whose
      // last layer runs B rows and a decode, batched_predict.h).
      for (const bool last_only : {false, true}) {
        std::vector<float> probs(static_cast<size_t>(B * (last_only ? 1 : L) * model.classes));
        const BatchedRequest request{zeros, B, L, last_only};
        const absl::Span<float> out[] = {absl::MakeSpan(probs)};
        const absl::Status status = PredictBatchedInto(model.model.get(), {&request, 1}, out, {},
                                                       kChunkTokens, pad_length_to_, staging_);
        if (!status.ok()) {
          return absl::Status(status.code(),
                              absl::StrCat("warm-up of '", model.name, "' at B = ", B, ", N = ", L,
                                           last_only ? " (last step)" : "", ": ", status.message()));
        }
        ++forwards;
      }
    }
  }
  return forwards;
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
  std::vector<absl::Span<float>> outputs;
  outputs.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const Prepared* prepared = batch[i];
    if (prepared->model.get() != &model) {
      return absl::InternalError("a batch mixes model versions; this is a bug");
    }
    const ValidatedInfer& in = prepared->input;
    requests.push_back({in.ticks(), in.batch, in.steps, in.last_only});
    ASSIGN_OR_RETURN(absl::Span<float> output, PrepareResponse(*prepared, responses[i]));
    outputs.push_back(output);
  }
  const ForwardWindow window(*model.model->backend());
  RETURN_IF_ERROR(PredictBatchedInto(model.model.get(), requests, outputs, abandoned, kChunkTokens,
                                     pad_length_to_, staging_));
  const double seconds = window.seconds();
  if (cost != nullptr) *cost = {seconds, window.peak_bytes()};
  for (inference::ModelInferResponse* response : responses) {
    auto* params = response->mutable_parameters();
    // The batch's forward time: requests batched together report the same figure.
    // compute_microseconds is an int64_param, a type of the KServe v2 protocol itself;
    // compute_seconds (double_param) is Triton's extension, kept for its clients.
    (*params)["compute_microseconds"].set_int64_param(
        static_cast<int64_t>(std::llround(seconds * 1e6)));
    (*params)["compute_seconds"].set_double_param(seconds);
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Span<float>> InferenceCore::PrepareResponse(
    const Prepared& prepared, inference::ModelInferResponse* response) const {
  const ModelEntry& model = *prepared.model;
  const ValidatedInfer& in = prepared.input;
  const int64_t out_steps = in.last_only ? 1 : in.steps;
  const size_t count = static_cast<size_t>(in.batch * out_steps * model.classes);
  response->set_model_name(model.name);
  response->set_model_version(model.version_string());
  response->set_id(prepared.id);
  auto* params = response->mutable_parameters();
  SetStringParameter(params, kKernelPathParameter, model.kernel_path);
  SetStringParameter(params, kDeviceParameter, model.device);
  auto* output = response->add_outputs();
  output->set_name(kProbsOutputName);
  output->set_datatype(kFp32Datatype);
  output->add_shape(in.batch);
  output->add_shape(out_steps);
  output->add_shape(model.classes);
  if (in.raw_output) {
    // Sized once; the forward writes the probabilities into it. Reserving past
    // the small-string buffer (15 bytes in libstdc++, 22 in libc++, where it is
    // not float-aligned) puts the bytes in a block from operator new, which is.
    std::string* raw = response->add_raw_output_contents();
    raw->reserve(std::max<size_t>(count * sizeof(float), 32));
    raw->resize(count * sizeof(float));
    if (reinterpret_cast<uintptr_t>(raw->data()) % alignof(float) != 0) {
      return absl::InternalError("the response's output buffer is not aligned for float; "
                                 "this is a bug");
    }
    return absl::MakeSpan(reinterpret_cast<float*>(raw->data()), count);
  }
  auto* typed = output->mutable_contents()->mutable_fp32_contents();
  typed->Resize(static_cast<int>(count), 0.0f);
  return absl::MakeSpan(typed->mutable_data(), count);
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
