// ExperimentsCore: what the Experiments RPCs do, with absl::Status results, so the
// gRPC handlers stay parse → core → status_convert → Finish and tests can call it
// without a channel. Submit validates the configuration with the one parser
// (INVALID_ARGUMENT naming every bad field), stores the experiment and queues it;
// the RPC returns at once. GetReport reads the report the engine wrote into the
// experiment's directory (FAILED_PRECONDITION while there is none yet).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "flashtick/v1/experiments.pb.h"
#include "server/experiments/experiment_runner.h"
#include "server/experiments/experiment_store.h"
#include "server/experiments/progress_hub.h"

namespace flashtick {

class ExperimentsCore {
 public:
  ExperimentsCore(ExperimentStore* store, ExperimentRunner* runner, ProgressHub* hub)
      : store_(store), runner_(runner), hub_(hub) {}

  absl::StatusOr<v1::Experiment> Submit(const v1::SubmitSweepRequest& request,
                                        const Submitter& submitter = {});
  absl::StatusOr<v1::Experiment> Get(const std::string& id);
  absl::StatusOr<v1::ListExperimentsResponse> List(const v1::ListExperimentsRequest& request);
  absl::StatusOr<v1::Experiment> Cancel(const std::string& id);
  absl::StatusOr<v1::GetReportResponse> Report(const v1::GetReportRequest& request);
  // Where a new watcher starts: the latest progress event, else the stored state.
  absl::StatusOr<v1::ExperimentProgress> Snapshot(const std::string& id);

  ProgressHub* hub() const { return hub_; }

 private:
  ExperimentStore* store_;
  ExperimentRunner* runner_;
  ProgressHub* hub_;
};

}  // namespace flashtick
