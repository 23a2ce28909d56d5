// Experiments RPCs: UNIMPLEMENTED until the training engine lands (issue 5).
#include "server/experiments/experiments_service.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/status_convert.h"

namespace flashtick {
namespace {

absl::Status NotYet(const char* method) {
  return absl::UnimplementedError(absl::StrCat(
      "flashtick.v1.Experiments/", method,
      " lands with the training engine (issue 5: walk-forward N-sweeps); this flashtickd "
      "build serves inference only"));
}

// A server-streaming reactor that ends at once with a status.
class FinishedWriter final : public grpc::ServerWriteReactor<v1::ExperimentProgress> {
 public:
  explicit FinishedWriter(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

ExperimentsService::ExperimentsService(Metrics* metrics) : metrics_(metrics) {}

grpc::ServerUnaryReactor* ExperimentsService::Unimplemented(grpc::CallbackServerContext* context,
                                                            const char* method) {
  const absl::Status status = NotYet(method);
  metrics_->RecordRequest("", method, StatusCodeName(status), 0.0);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* ExperimentsService::SubmitSweep(grpc::CallbackServerContext* context,
                                                          const v1::SubmitSweepRequest*,
                                                          v1::SubmitSweepResponse*) {
  return Unimplemented(context, "SubmitSweep");
}

grpc::ServerUnaryReactor* ExperimentsService::GetExperiment(grpc::CallbackServerContext* context,
                                                            const v1::GetExperimentRequest*,
                                                            v1::Experiment*) {
  return Unimplemented(context, "GetExperiment");
}

grpc::ServerUnaryReactor* ExperimentsService::ListExperiments(
    grpc::CallbackServerContext* context, const v1::ListExperimentsRequest*,
    v1::ListExperimentsResponse*) {
  return Unimplemented(context, "ListExperiments");
}

grpc::ServerUnaryReactor* ExperimentsService::CancelExperiment(
    grpc::CallbackServerContext* context, const v1::CancelExperimentRequest*,
    v1::CancelExperimentResponse*) {
  return Unimplemented(context, "CancelExperiment");
}

grpc::ServerWriteReactor<v1::ExperimentProgress>* ExperimentsService::WatchExperiment(
    grpc::CallbackServerContext*, const v1::WatchExperimentRequest*) {
  const absl::Status status = NotYet("WatchExperiment");
  metrics_->RecordRequest("", "WatchExperiment", StatusCodeName(status), 0.0);
  return new FinishedWriter(ToGrpcStatus(status));
}

grpc::ServerUnaryReactor* ExperimentsService::GetReport(grpc::CallbackServerContext* context,
                                                        const v1::GetReportRequest*,
                                                        v1::GetReportResponse*) {
  return Unimplemented(context, "GetReport");
}

}  // namespace flashtick
