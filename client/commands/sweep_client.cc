// SweepClient (see sweep_client.h).
#include "client/commands/sweep_client.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace flashtick {
namespace {

absl::Status FromGrpc(const char* rpc, const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat("flashtick.v1.Experiments/", rpc, ": ", status.error_message()));
}

}  // namespace

SweepClient::SweepClient(const ClientOptions& options)
    : options_(options), stub_(v1::Experiments::NewStub(MakeChannel(options))) {}

absl::StatusOr<v1::Experiment> SweepClient::Submit(const v1::SubmitSweepRequest& request) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::SubmitSweepResponse response;
  const grpc::Status status = stub_->SubmitSweep(&context, request, &response);
  if (!status.ok()) return FromGrpc("SubmitSweep", status);
  return response.experiment();
}

absl::StatusOr<std::string> SweepClient::ResolveConfig(const v1::SubmitSweepRequest& request) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::ResolveSweepConfigResponse response;
  const grpc::Status status = stub_->ResolveSweepConfig(&context, request, &response);
  if (!status.ok()) return FromGrpc("ResolveSweepConfig", status);
  return response.config_json();
}

absl::StatusOr<v1::Experiment> SweepClient::Get(const std::string& id) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::GetExperimentRequest request;
  request.set_id(id);
  v1::Experiment response;
  const grpc::Status status = stub_->GetExperiment(&context, request, &response);
  if (!status.ok()) return FromGrpc("GetExperiment", status);
  return response;
}

absl::StatusOr<v1::ListExperimentsResponse> SweepClient::List(
    const v1::ListExperimentsRequest& request) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::ListExperimentsResponse response;
  const grpc::Status status = stub_->ListExperiments(&context, request, &response);
  if (!status.ok()) return FromGrpc("ListExperiments", status);
  return response;
}

absl::StatusOr<v1::Experiment> SweepClient::Cancel(const std::string& id) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::CancelExperimentRequest request;
  request.set_id(id);
  v1::CancelExperimentResponse response;
  const grpc::Status status = stub_->CancelExperiment(&context, request, &response);
  if (!status.ok()) return FromGrpc("CancelExperiment", status);
  return response.experiment();
}

absl::Status SweepClient::Delete(const std::string& id) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::DeleteExperimentRequest request;
  request.set_id(id);
  v1::DeleteExperimentResponse response;
  const grpc::Status status = stub_->DeleteExperiment(&context, request, &response);
  if (!status.ok()) return FromGrpc("DeleteExperiment", status);
  return absl::OkStatus();
}

absl::StatusOr<v1::PromoteArmResponse> SweepClient::Promote(
    const v1::PromoteArmRequest& request) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::PromoteArmResponse response;
  const grpc::Status status = stub_->PromoteArm(&context, request, &response);
  if (!status.ok()) return FromGrpc("PromoteArm", status);
  return response;
}

absl::StatusOr<v1::GetReportResponse> SweepClient::Report(const v1::GetReportRequest& request) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::GetReportResponse response;
  const grpc::Status status = stub_->GetReport(&context, request, &response);
  if (!status.ok()) return FromGrpc("GetReport", status);
  return response;
}

absl::Status SweepClient::Watch(
    const std::string& id, const std::function<void(const v1::ExperimentProgress&)>& on_event) {
  grpc::ClientContext context;
  SetDeadline(options_, &context);
  v1::WatchExperimentRequest request;
  request.set_id(id);
  auto reader = stub_->WatchExperiment(&context, request);
  v1::ExperimentProgress event;
  while (reader->Read(&event)) on_event(event);
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return FromGrpc("WatchExperiment", status);
  return absl::OkStatus();
}

std::string StateName(v1::ExperimentState state) {
  std::string name = v1::ExperimentState_Name(state);
  constexpr absl::string_view kPrefix = "EXPERIMENT_STATE_";
  if (name.rfind(kPrefix.data(), 0) == 0) name = name.substr(kPrefix.size());
  return absl::AsciiStrToLower(name);
}

std::string Duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

}  // namespace flashtick
