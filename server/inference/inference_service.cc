// GRPCInferenceService handlers (see inference_service.h).
#include "server/inference/inference_service.h"

#include <chrono>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/inference/batched_predict.h"
#include "server/logging.h"
#include "server/status_convert.h"

namespace flashtick {

InferenceService::InferenceService(const InferenceCore* core, WorkQueue* queue, Metrics* metrics,
                                   const std::atomic<bool>* ready, ModelControl* control)
    : core_(core), queue_(queue), metrics_(metrics), ready_(ready), control_(control) {}

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

namespace {

constexpr char kModelInfer[] = "ModelInfer";

// One ModelInfer waiting on the queue: the validated tensor and what the batch
// runner needs to answer it. context, response and reactor stay valid until
// Finish, which the runner calls exactly once per job.
struct InferJob : BatchJob {
  InferenceCore::Prepared prepared;
  grpc::CallbackServerContext* context = nullptr;
  inference::ModelInferResponse* response = nullptr;
  grpc::ServerUnaryReactor* reactor = nullptr;
  std::string model;  // metric label
  absl::Time start;   // arrival on the RPC thread
  absl::Time deadline = absl::InfiniteFuture();
};

// Requests merge only for the same model version and length bucket
// (batched_predict.h), so padding stays under ~19 % of a request's rows. The
// entry's address tells a reloaded version from the one it replaced (same name
// and number, other weights); queued jobs hold their entry, so the address is
// not reused while a job with this key waits.
std::string BatchKey(const InferenceCore::Prepared& prepared) {
  return absl::StrCat(prepared.model->name, "/", prepared.model->version_string(), "/",
                      LengthBucket(prepared.input.steps), "/",
                      reinterpret_cast<uintptr_t>(prepared.model.get()));
}

}  // namespace

grpc::ServerUnaryReactor* InferenceService::ModelInfer(grpc::CallbackServerContext* context,
                                                       const inference::ModelInferRequest* request,
                                                       inference::ModelInferResponse* response) {
  const absl::Time start = absl::Now();
  auto* reactor = context->DefaultReactor();
  const std::string model = core_->ModelLabel(request->model_name());
  // gRPC's callback API passes the request as const, but it is this call's own
  // message (a plain object, not on a protobuf arena, read by nobody after the
  // handler starts and freed when the call ends): the tensor is moved out of it
  // so that a queued request holds its data once.
  auto* owned_request = const_cast<inference::ModelInferRequest*>(request);
  auto prepared = core_->Prepare(owned_request);
  if (!prepared.ok()) {
    Finish(reactor, model, kModelInfer, start, prepared.status());
    return reactor;
  }
  auto job = std::make_shared<InferJob>();
  job->prepared = std::move(prepared).value();
  job->context = context;
  job->response = response;
  job->reactor = reactor;
  job->model = model;
  job->start = start;
  // gRPC reports "no deadline" as the far future; absl saturates it.
  if (context->deadline() != std::chrono::system_clock::time_point::max()) {
    job->deadline = absl::FromChrono(context->deadline());
  }
  // The tensor (moved out of the request) and what remains of the request.
  job->bytes = InferenceCore::QueuedBytes(job->prepared, *request);
  const std::string key = BatchKey(job->prepared);
  absl::Status submitted = queue_->SubmitBatchable(
      key, job, [this](std::vector<std::shared_ptr<BatchJob>> batch) { RunBatch(batch); });
  if (!submitted.ok()) Finish(reactor, model, kModelInfer, start, submitted);
  return reactor;
}

// Drops the expired and cancelled requests (they cost no compute), runs the rest
// as one forward, then answers each. The deadline is checked first: gRPC also
// marks an expired call cancelled, and DEADLINE_EXCEEDED says more.
void InferenceService::RunBatch(const std::vector<std::shared_ptr<BatchJob>>& batch) {
  const absl::Time now = absl::Now();
  std::vector<InferJob*> live;
  live.reserve(batch.size());
  for (const auto& base : batch) {
    auto* job = static_cast<InferJob*>(base.get());
    if (now >= job->deadline) {
      Finish(job->reactor, job->model, kModelInfer, job->start,
             absl::DeadlineExceededError(absl::StrCat(
                 "the request's deadline passed after ",
                 absl::FormatDuration(now - job->start),
                 " waiting on the inference queue; nothing was computed (raise the client "
                 "timeout or add replicas)")));
    } else if (job->context->IsCancelled()) {
      Finish(job->reactor, job->model, kModelInfer, job->start,
             absl::CancelledError("the client cancelled the request before it ran"));
    } else {
      live.push_back(job);
    }
  }
  if (live.empty()) return;
  std::vector<const InferenceCore::Prepared*> prepared;
  std::vector<inference::ModelInferResponse*> responses;
  for (InferJob* job : live) {
    prepared.push_back(&job->prepared);
    responses.push_back(job->response);
  }
  const std::string& model = live.front()->model;
  metrics_->RecordBatch(model, static_cast<int64_t>(live.size()));
  InferenceCore::BatchCost cost;
  // Abandoned when no client of the batch is still waiting for it.
  const auto abandoned = [&live] {
    const absl::Time now = absl::Now();
    for (const InferJob* job : live) {
      if (!job->context->IsCancelled() && now < job->deadline) return false;
    }
    return true;
  };
  const absl::Status status = core_->RunBatch(prepared, responses, &cost, abandoned);
  for (InferJob* job : live) {
    if (status.ok()) {
      metrics_->RecordInference(job->model, job->prepared.input.batch, job->prepared.input.steps);
      metrics_->RecordQueueAndCompute(job->model, kModelInfer,
                                      absl::ToDoubleSeconds(now - job->enqueued),
                                      cost.compute_seconds);
      metrics_->RecordRequestPeakMemory(job->model, kModelInfer, cost.peak_memory_bytes);
    }
    Finish(job->reactor, job->model, kModelInfer, job->start, status);
  }
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

grpc::ServerUnaryReactor* InferenceService::RepositoryModelLoad(
    grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
    inference::RepositoryModelLoadResponse*) {
  const absl::Time start = absl::Now();
  const absl::Status status =
      control_ == nullptr ? absl::UnimplementedError("model control is off on this server")
                          : control_->Load(*request);
  auto* reactor = context->DefaultReactor();
  Finish(reactor, core_->ModelLabel(request->model_name()), "RepositoryModelLoad", start, status);
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelUnload(
    grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
    inference::RepositoryModelUnloadResponse*) {
  const absl::Time start = absl::Now();
  // The label is taken before the unload: the name was served until now.
  const std::string model = core_->ModelLabel(request->model_name());
  const absl::Status status =
      control_ == nullptr ? absl::UnimplementedError("model control is off on this server")
                          : control_->Unload(*request);
  auto* reactor = context->DefaultReactor();
  Finish(reactor, model, "RepositoryModelUnload", start, status);
  return reactor;
}

}  // namespace flashtick
