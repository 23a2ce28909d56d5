// InferenceClient: the CLI's typed access to flashtickd: KServe v2
// (inference.GRPCInferenceService) and grpc.health.v1. Every call returns an
// absl::Status[Or]; a gRPC error keeps its code and message, prefixed with the
// RPC name, so the CLI prints what the server said.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/client_options.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "inference/grpc_service.grpc.pb.h"

namespace flashtick {

struct InferResult {
  std::vector<float> probs;     // [batch, steps, classes] row-major
  int64_t batch = 0;
  int64_t steps = 0;            // steps returned (1 when last_only)
  int64_t classes = 0;
  std::string model_version;
  std::string kernel_path;      // response parameter
  std::string device;           // response parameter
  double compute_seconds = 0;   // response parameter: model time on the server
  double latency_seconds = 0;   // round trip seen by the client
};

class InferenceClient {
 public:
  explicit InferenceClient(const ClientOptions& options);

  absl::StatusOr<bool> ServerLive();
  absl::StatusOr<bool> ServerReady();
  // grpc.health.v1 Check of `service` ("" = the whole server).
  absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> HealthCheck(
      const std::string& service);
  absl::StatusOr<inference::ServerMetadataResponse> ServerMetadata();
  absl::StatusOr<inference::RepositoryIndexResponse> RepositoryIndex();
  absl::StatusOr<inference::ModelMetadataResponse> ModelMetadata(const std::string& model,
                                                                 const std::string& version);
  // ticks: [batch, steps, features] FP32, sent as raw_input_contents.
  absl::StatusOr<InferResult> Infer(const std::string& model, const std::string& version,
                                    const std::vector<float>& ticks, int64_t batch,
                                    int64_t steps, int64_t features, bool last_only);

 private:
  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> inference_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace flashtick
