// InferenceClient calls (see inference_client.h).
#include "client/inference_client.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace flashtick {
namespace {

// gRPC and Abseil share the canonical code numbers (server/status_convert.cc).
absl::Status FromGrpc(const char* rpc, const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(rpc, ": ", status.error_message()));
}

std::string StringParam(const inference::ModelInferResponse& response, const std::string& key) {
  auto it = response.parameters().find(key);
  return it == response.parameters().end() ? "" : it->second.string_param();
}

}  // namespace

InferenceClient::InferenceClient(const ClientOptions& options)
    : options_(options),
      channel_(MakeChannel(options)),
      inference_(inference::GRPCInferenceService::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)) {}

absl::StatusOr<bool> InferenceClient::ServerLive() {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  inference::ServerLiveResponse response;
  grpc::Status status = inference_->ServerLive(&context, {}, &response);
  if (!status.ok()) return FromGrpc("ServerLive", status);
  return response.live();
}

absl::StatusOr<bool> InferenceClient::ServerReady() {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  inference::ServerReadyResponse response;
  grpc::Status status = inference_->ServerReady(&context, {}, &response);
  if (!status.ok()) return FromGrpc("ServerReady", status);
  return response.ready();
}

absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> InferenceClient::HealthCheck(
    const std::string& service) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = health_->Check(&context, request, &response);
  if (!status.ok()) return FromGrpc("grpc.health.v1.Health/Check", status);
  return response.status();
}

absl::StatusOr<inference::ServerMetadataResponse> InferenceClient::ServerMetadata() {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  inference::ServerMetadataResponse response;
  grpc::Status status = inference_->ServerMetadata(&context, {}, &response);
  if (!status.ok()) return FromGrpc("ServerMetadata", status);
  return response;
}

absl::StatusOr<inference::RepositoryIndexResponse> InferenceClient::RepositoryIndex() {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  inference::RepositoryIndexResponse response;
  grpc::Status status = inference_->RepositoryIndex(&context, {}, &response);
  if (!status.ok()) return FromGrpc("RepositoryIndex", status);
  return response;
}

absl::StatusOr<inference::ModelMetadataResponse> InferenceClient::ModelMetadata(
    const std::string& model, const std::string& version) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  inference::ModelMetadataRequest request;
  request.set_name(model);
  request.set_version(version);
  inference::ModelMetadataResponse response;
  grpc::Status status = inference_->ModelMetadata(&context, request, &response);
  if (!status.ok()) return FromGrpc("ModelMetadata", status);
  return response;
}

absl::StatusOr<InferResult> InferenceClient::Infer(const std::string& model,
                                                   const std::string& version,
                                                   const std::vector<float>& ticks, int64_t batch,
                                                   int64_t steps, int64_t features,
                                                   bool last_only) {
  inference::ModelInferRequest request;
  request.set_model_name(model);
  request.set_model_version(version);
  if (last_only) (*request.mutable_parameters())["last_only"].set_bool_param(true);
  auto* input = request.add_inputs();
  input->set_name("ticks");
  input->set_datatype("FP32");
  input->add_shape(batch);
  input->add_shape(steps);
  input->add_shape(features);
  request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(ticks.data()),
                                           ticks.size() * sizeof(float));
  request.add_outputs()->set_name("probs");

  grpc::ClientContext context;
  SetDeadline(options_, &context);
  inference::ModelInferResponse response;
  const absl::Time start = absl::Now();
  grpc::Status status = inference_->ModelInfer(&context, request, &response);
  const double latency = absl::ToDoubleSeconds(absl::Now() - start);
  if (!status.ok()) return FromGrpc("ModelInfer", status);

  if (response.outputs_size() != 1 || response.outputs(0).shape_size() != 3) {
    return absl::DataLossError("ModelInfer: the response lacks the probs [B, N, classes] output");
  }
  const auto& output = response.outputs(0);
  InferResult result;
  result.batch = output.shape(0);
  result.steps = output.shape(1);
  result.classes = output.shape(2);
  const int64_t count = result.batch * result.steps * result.classes;
  if (response.raw_output_contents_size() == 1) {
    const std::string& raw = response.raw_output_contents(0);
    if (static_cast<int64_t>(raw.size()) != count * static_cast<int64_t>(sizeof(float))) {
      return absl::DataLossError(absl::StrCat("ModelInfer: probs has ", raw.size(),
                                              " bytes for ", count, " FP32 values"));
    }
    result.probs.resize(count);
    std::memcpy(result.probs.data(), raw.data(), raw.size());
  } else if (output.contents().fp32_contents_size() == count) {
    result.probs.assign(output.contents().fp32_contents().begin(),
                        output.contents().fp32_contents().end());
  } else {
    return absl::DataLossError("ModelInfer: probs carries no data of the announced shape");
  }
  result.model_version = response.model_version();
  result.kernel_path = StringParam(response, "kernel_path");
  result.device = StringParam(response, "device");
  // The v2 int64 parameter first; Triton's double one from older servers.
  auto micros = response.parameters().find("compute_microseconds");
  auto compute = response.parameters().find("compute_seconds");
  if (micros != response.parameters().end()) {
    result.compute_seconds = static_cast<double>(micros->second.int64_param()) * 1e-6;
  } else if (compute != response.parameters().end()) {
    result.compute_seconds = compute->second.double_param();
  }
  result.latency_seconds = latency;
  return result;
}

}  // namespace flashtick
