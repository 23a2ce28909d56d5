// GRPCInferenceService handlers (see inference_service.h).
#include "server/inference/inference_service.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/logging.h"
#include "server/status_convert.h"

namespace flashtick {

InferenceService::InferenceService(const InferenceCore* core, WorkQueue* queue, Metrics* metrics,
                                   const std::atomic<bool>* ready)
    : core_(core), queue_(queue), metrics_(metrics), ready_(ready) {}

void InferenceService::Finish(grpc::ServerUnaryReactor* reactor, const std::string& model,
                              const char* method, absl::Time start, const absl::Status& status) {
  metrics_->RecordRequest(model, method, StatusCodeName(status),
                          absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument &&
      status.code() != absl::StatusCode::kNotFound) {
    // Client mistakes are the client's to read; server-side refusals and
    // failures are logged for the operator (message only, never tensor data).
    LogWarning(absl::StrCat(method, " model='", model, "': ", status.ToString()));
  }
  reactor->Finish(ToGrpcStatus(status));
}

grpc::ServerUnaryReactor* InferenceService::ServerLive(grpc::CallbackServerContext* context,
                                                       const inference::ServerLiveRequest*,
                                                       inference::ServerLiveResponse* response) {
  const absl::Time start = absl::Now();
  response->set_live(true);
  auto* reactor = context->DefaultReactor();
  Finish(reactor, "", "ServerLive", start, absl::OkStatus());
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::ServerReady(grpc::CallbackServerContext* context,
                                                        const inference::ServerReadyRequest*,
                                                        inference::ServerReadyResponse* response) {
  const absl::Time start = absl::Now();
  response->set_ready(ready_->load());
  auto* reactor = context->DefaultReactor();
  Finish(reactor, "", "ServerReady", start, absl::OkStatus());
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::ModelReady(grpc::CallbackServerContext* context,
                                                       const inference::ModelReadyRequest* request,
                                                       inference::ModelReadyResponse* response) {
  const absl::Time start = absl::Now();
  response->set_ready(ready_->load() && core_->ModelReady(*request));
  auto* reactor = context->DefaultReactor();
  Finish(reactor, core_->ModelLabel(request->name()), "ModelReady", start, absl::OkStatus());
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  const absl::Time start = absl::Now();
  *response = core_->ServerMetadata();
  auto* reactor = context->DefaultReactor();
  Finish(reactor, "", "ServerMetadata", start, absl::OkStatus());
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  const absl::Time start = absl::Now();
  auto metadata = core_->ModelMetadata(*request);
  if (metadata.ok()) *response = std::move(metadata).value();
  auto* reactor = context->DefaultReactor();
  Finish(reactor, core_->ModelLabel(request->name()), "ModelMetadata", start, metadata.status());
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::ModelInfer(grpc::CallbackServerContext* context,
                                                       const inference::ModelInferRequest* request,
                                                       inference::ModelInferResponse* response) {
  const absl::Time start = absl::Now();
  auto* reactor = context->DefaultReactor();
  const std::string model = core_->ModelLabel(request->model_name());
  auto prepared = core_->Prepare(*request);
  if (!prepared.ok()) {
    Finish(reactor, model, "ModelInfer", start, prepared.status());
    return reactor;
  }
  // The job owns the validated tensor; context, response and reactor stay valid
  // until Finish, which the job calls exactly once.
  auto job_input = std::make_shared<InferenceCore::Prepared>(std::move(prepared).value());
  absl::Status submitted = queue_->Submit([this, context, response, reactor, model, start,
                                           job_input] {
    absl::Status status;
    if (context->IsCancelled()) {
      status = absl::CancelledError("the client cancelled the request before it ran");
    } else {
      status = core_->Run(*job_input, response);
      if (status.ok()) {
        metrics_->RecordInference(model, job_input->input.batch, job_input->input.steps);
      }
    }
    Finish(reactor, model, "ModelInfer", start, status);
  });
  if (!submitted.ok()) Finish(reactor, model, "ModelInfer", start, submitted);
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::RepositoryIndex(
    grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest*,
    inference::RepositoryIndexResponse* response) {
  const absl::Time start = absl::Now();
  *response = core_->RepositoryIndex();
  auto* reactor = context->DefaultReactor();
  Finish(reactor, "", "RepositoryIndex", start, absl::OkStatus());
  return reactor;
}

}  // namespace flashtick
