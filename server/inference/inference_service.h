// InferenceService: inference.GRPCInferenceService (KServe v2) on gRPC's callback
// API. Handlers are thin: parse -> InferenceCore -> ToGrpcStatus -> Finish, and
// each records flashtick_requests_total / _duration_seconds once. ModelInfer is
// validated on the RPC thread (bad requests answer at once and change nothing)
// and computed on the WorkQueue; the reactor is finished from the worker.
// Requests of one model and length bucket are batched by the queue (flags
// --batch-max-delay-us, --batch-max-size) into one forward; expired or
// cancelled ones are dropped before it and answered DEADLINE_EXCEEDED/CANCELLED.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "inference/grpc_service.grpc.pb.h"
#include "server/inference/inference_core.h"
#include "server/inference/model_control.h"
#include "server/metrics/metrics.h"
#include "server/work_queue.h"

namespace flashtick {

class InferenceService final : public inference::GRPCInferenceService::CallbackService {
 public:
  // None owned. `ready` is false until the server listens and once it drains.
  // `control` null: RepositoryModelLoad / Unload answer UNIMPLEMENTED.
  InferenceService(const InferenceCore* core, WorkQueue* queue, Metrics* metrics,
                   const std::atomic<bool>* ready, ModelControl* control = nullptr);

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  // Run on the RPC thread: a load reads weights from disk, but loads are rare,
  // operator-driven and serialised, and a worker thread would delay inference instead.
  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse* response) override;

 private:
  // Records the request's metrics and finishes the reactor with `status`.
  void Finish(grpc::ServerUnaryReactor* reactor, const std::string& model, const char* method,
              absl::Time start, const absl::Status& status);

  // Answers one batch of ModelInfer jobs popped together by the queue.
  void RunBatch(const std::vector<std::shared_ptr<BatchJob>>& batch);

  const InferenceCore* core_;
  WorkQueue* queue_;
  Metrics* metrics_;
  const std::atomic<bool>* ready_;
  ModelControl* control_;
};

}  // namespace flashtick
