// Experiments RPC handlers (see experiments_service.h).
#include "server/experiments/experiments_service.h"

#include <algorithm>
#include <chrono>

#include "absl/status/status.h"
#include "server/experiments/watch_reactor.h"
#include "server/status_convert.h"

namespace flashtick {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A server-streaming reactor that ends at once with a status.
class FinishedWriter final : public grpc::ServerWriteReactor<v1::ExperimentProgress> {
 public:
  explicit FinishedWriter(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

ExperimentsService::ExperimentsService(ExperimentsCore* core, Metrics* metrics,
                                       const ClientNamer* namer, int max_active_per_client,
                                       std::vector<std::string> operators)
    : core_(core),
      metrics_(metrics),
      namer_(namer),
      max_active_per_client_(max_active_per_client),
      operators_(std::move(operators)) {}

Caller ExperimentsService::CallerOf(const grpc::CallbackServerContext& context) const {
  Caller caller;
  caller.client = namer_->Name(context);
  caller.is_operator =
      std::find(operators_.begin(), operators_.end(), caller.client) != operators_.end();
  return caller;
}

absl::Status ExperimentsService::Enabled() const {
  if (core_ != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "this flashtickd has no experiment store: start it with --experiment-dir DIR to run "
      "N-sweeps (state, checkpoints and reports live there)");
}

grpc::ServerUnaryReactor* ExperimentsService::Done(grpc::CallbackServerContext* context,
                                                   const char* method, const absl::Status& status,
                                                   double start_seconds) {
  metrics_->RecordRequest("", method, StatusCodeName(status), Now() - start_seconds);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* ExperimentsService::SubmitSweep(grpc::CallbackServerContext* context,
                                                          const v1::SubmitSweepRequest* request,
                                                          v1::SubmitSweepResponse* response) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) {
    auto experiment = core_->Submit(*request, {namer_->Name(*context), max_active_per_client_});
    status = experiment.status();
    // Submit's RESOURCE_EXHAUSTED is a refusal: the per-client limit or the memory
    // estimate.
    if (absl::IsResourceExhausted(status)) metrics_->RecordExperimentRefused();
    if (experiment.ok()) *response->mutable_experiment() = *std::move(experiment);
  }
  return Done(context, "SubmitSweep", status, start);
}

grpc::ServerUnaryReactor* ExperimentsService::ResolveSweepConfig(
    grpc::CallbackServerContext* context, const v1::SubmitSweepRequest* request,
    v1::ResolveSweepConfigResponse* response) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) {
    auto json = core_->ResolveConfig(*request);
    status = json.status();
    if (json.ok()) response->set_config_json(*std::move(json));
  }
  return Done(context, "ResolveSweepConfig", status, start);
}

grpc::ServerUnaryReactor* ExperimentsService::GetExperiment(grpc::CallbackServerContext* context,
                                                            const v1::GetExperimentRequest* request,
                                                            v1::Experiment* response) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) {
    auto experiment = core_->Get(request->id(), CallerOf(*context));
    status = experiment.status();
    if (experiment.ok()) *response = *std::move(experiment);
  }
  return Done(context, "GetExperiment", status, start);
}

grpc::ServerUnaryReactor* ExperimentsService::ListExperiments(
    grpc::CallbackServerContext* context, const v1::ListExperimentsRequest* request,
    v1::ListExperimentsResponse* response) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) {
    auto list = core_->List(*request, CallerOf(*context));
    status = list.status();
    if (list.ok()) *response = *std::move(list);
  }
  return Done(context, "ListExperiments", status, start);
}

grpc::ServerUnaryReactor* ExperimentsService::CancelExperiment(
    grpc::CallbackServerContext* context, const v1::CancelExperimentRequest* request,
    v1::CancelExperimentResponse* response) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) {
    auto experiment = core_->Cancel(request->id(), CallerOf(*context));
    status = experiment.status();
    if (experiment.ok()) *response->mutable_experiment() = *std::move(experiment);
  }
  return Done(context, "CancelExperiment", status, start);
}

grpc::ServerWriteReactor<v1::ExperimentProgress>* ExperimentsService::WatchExperiment(
    grpc::CallbackServerContext* context, const v1::WatchExperimentRequest* request) {
  const absl::Status status = Enabled();
  if (!status.ok()) {
    metrics_->RecordRequest("", "WatchExperiment", StatusCodeName(status), 0.0);
    return new FinishedWriter(ToGrpcStatus(status));
  }
  return new WatchReactor(core_, metrics_, request->id(), CallerOf(*context));
}

grpc::ServerUnaryReactor* ExperimentsService::DeleteExperiment(
    grpc::CallbackServerContext* context, const v1::DeleteExperimentRequest* request,
    v1::DeleteExperimentResponse*) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) status = core_->Delete(request->id(), CallerOf(*context));
  return Done(context, "DeleteExperiment", status, start);
}

grpc::ServerUnaryReactor* ExperimentsService::GetReport(grpc::CallbackServerContext* context,
                                                        const v1::GetReportRequest* request,
                                                        v1::GetReportResponse* response) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) {
    auto report = core_->Report(*request, CallerOf(*context));
    status = report.status();
    if (report.ok()) *response = *std::move(report);
  }
  return Done(context, "GetReport", status, start);
}

grpc::ServerUnaryReactor* ExperimentsService::PromoteArm(grpc::CallbackServerContext* context,
                                                         const v1::PromoteArmRequest* request,
                                                         v1::PromoteArmResponse* response) {
  const double start = Now();
  absl::Status status = Enabled();
  if (status.ok()) {
    // Runs on the callback thread: the export and the load are one arm's weights
    // (seconds at most), and promotions are rare operator actions.
    auto promoted = core_->Promote(*request, CallerOf(*context));
    status = promoted.status();
    if (promoted.ok()) *response = *std::move(promoted);
  }
  return Done(context, "PromoteArm", status, start);
}

}  // namespace flashtick
