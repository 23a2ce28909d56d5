// ExperimentsService: flashtick.v1.Experiments (SubmitSweep, GetExperiment,
// ListExperiments, CancelExperiment, WatchExperiment, GetReport). The training
// engine, experiment store and sweep runner land with issue 5; until then every
// RPC answers UNIMPLEMENTED with a message saying so, and is counted in
// flashtick_requests_total like any other RPC. The wire contract is final
// (proto/flashtick/v1/experiments.proto) so clients can be written against it.
#pragma once

#include <grpcpp/grpcpp.h>

#include "flashtick/v1/experiments.grpc.pb.h"
#include "server/metrics/metrics.h"

namespace flashtick {

class ExperimentsService final : public flashtick::v1::Experiments::CallbackService {
 public:
  explicit ExperimentsService(Metrics* metrics);  // not owned

  grpc::ServerUnaryReactor* SubmitSweep(grpc::CallbackServerContext* context,
                                        const v1::SubmitSweepRequest* request,
                                        v1::SubmitSweepResponse* response) override;
  grpc::ServerUnaryReactor* GetExperiment(grpc::CallbackServerContext* context,
                                          const v1::GetExperimentRequest* request,
                                          v1::Experiment* response) override;
  grpc::ServerUnaryReactor* ListExperiments(grpc::CallbackServerContext* context,
                                            const v1::ListExperimentsRequest* request,
                                            v1::ListExperimentsResponse* response) override;
  grpc::ServerUnaryReactor* CancelExperiment(grpc::CallbackServerContext* context,
                                             const v1::CancelExperimentRequest* request,
                                             v1::CancelExperimentResponse* response) override;
  grpc::ServerWriteReactor<v1::ExperimentProgress>* WatchExperiment(
      grpc::CallbackServerContext* context, const v1::WatchExperimentRequest* request) override;
  grpc::ServerUnaryReactor* GetReport(grpc::CallbackServerContext* context,
                                      const v1::GetReportRequest* request,
                                      v1::GetReportResponse* response) override;

 private:
  grpc::ServerUnaryReactor* Unimplemented(grpc::CallbackServerContext* context, const char* method);

  Metrics* metrics_;
};

}  // namespace flashtick
