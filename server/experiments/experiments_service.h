// ExperimentsService: flashtick.v1.Experiments on the callback API. Each unary
// handler is parse → ExperimentsCore (absl::StatusOr) → ToGrpcStatus → Finish,
// counted in flashtick_requests_total; WatchExperiment is a WatchReactor stream.
// Store work is a few small SQLite statements, so it runs on gRPC's callback
// thread; sweeps run on the ExperimentRunner's workers, never in a handler.
// Without an experiment store (flashtickd started without --experiment-dir) every
// RPC answers FAILED_PRECONDITION saying how to enable it.
#pragma once

#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "flashtick/v1/experiments.grpc.pb.h"
#include "server/client_identity.h"
#include "server/experiments/experiments_core.h"
#include "server/metrics/metrics.h"

namespace flashtick {

class ExperimentsService final : public flashtick::v1::Experiments::CallbackService {
 public:
  // core may be null: experiments disabled.
  // namer names the submitter for the per-client limit of max_active_per_client
  // queued or running experiments.
  // operators: client names that see and cancel every experiment (the others see
  // only their own).
  ExperimentsService(ExperimentsCore* core, Metrics* metrics, const ClientNamer* namer,
                     int max_active_per_client, std::vector<std::string> operators = {});

  grpc::ServerUnaryReactor* SubmitSweep(grpc::CallbackServerContext* context,
                                        const v1::SubmitSweepRequest* request,
                                        v1::SubmitSweepResponse* response) override;
  grpc::ServerUnaryReactor* ResolveSweepConfig(grpc::CallbackServerContext* context,
                                               const v1::SubmitSweepRequest* request,
                                               v1::ResolveSweepConfigResponse* response) override;
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
  grpc::ServerUnaryReactor* DeleteExperiment(grpc::CallbackServerContext* context,
                                             const v1::DeleteExperimentRequest* request,
                                             v1::DeleteExperimentResponse* response) override;
  grpc::ServerUnaryReactor* GetReport(grpc::CallbackServerContext* context,
                                      const v1::GetReportRequest* request,
                                      v1::GetReportResponse* response) override;
  grpc::ServerUnaryReactor* PromoteArm(grpc::CallbackServerContext* context,
                                       const v1::PromoteArmRequest* request,
                                       v1::PromoteArmResponse* response) override;

 private:
  // Finishes a unary call with `status`, recording it under `method`.
  grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context, const char* method,
                                 const absl::Status& status, double start_seconds);
  absl::Status Enabled() const;
  Caller CallerOf(const grpc::CallbackServerContext& context) const;

  ExperimentsCore* core_;
  Metrics* metrics_;
  const ClientNamer* namer_;
  int max_active_per_client_;
  std::vector<std::string> operators_;
};

}  // namespace flashtick
