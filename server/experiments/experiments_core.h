// ExperimentsCore: what the Experiments RPCs do, with absl::Status results, so the
// gRPC handlers stay parse → core → status_convert → Finish and tests can call it
// without a channel. Submit validates the configuration with the one parser
// (INVALID_ARGUMENT naming every bad field), stores the experiment and queues it;
// the RPC returns at once. GetReport reads the report the engine wrote into the
// experiment's directory (FAILED_PRECONDITION while there is none yet).
// Untrusted-input limits (docs/security.md): a config's size, CSV paths inside the
// data root (ticks/data_file.h), a memory estimate (sweep_memory_estimate.h).
// Experiments belong to the client that submitted them: another client gets
// NOT_FOUND for them, as for an id that does not exist, and its request_key is its
// own; an operator (--operator-client) sees and cancels every experiment.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "flashtick/v1/experiments.pb.h"
#include "research/sweep/sweep_config.h"
#include "server/experiments/experiment_runner.h"
#include "server/experiments/experiment_store.h"
#include "server/experiments/progress_hub.h"
#include "server/inference/model_control.h"

namespace flashtick {

// Who calls: the client's name (server/client_identity.h) and whether it is an
// operator. The default (an operator) is for in-process callers.
struct Caller {
  std::string client;
  bool is_operator = true;
};

struct ExperimentLimits {
  int64_t max_config_bytes = 256 << 10;  // --max-config-bytes
  int64_t memory_bytes = 0;              // --experiment-memory-mb; 0: no estimate check
  bool arms_elsewhere = false;           // --sweep-arm-runner=kubernetes: one arm's worth
};

class ExperimentsCore {
 public:
  ExperimentsCore(ExperimentStore* store, ExperimentRunner* runner, ProgressHub* hub,
                  ExperimentLimits limits = {})
      : store_(store), runner_(runner), hub_(hub), limits_(limits) {}

  // The submitter also owns the experiment (Caller.client = submitter.client).
  absl::StatusOr<v1::Experiment> Submit(const v1::SubmitSweepRequest& request,
                                        const Submitter& submitter = {});
  // The full JSON that Submit would store for `request` (its config, config_json or
  // preset), with Submit's parser and size limits; creates nothing.
  absl::StatusOr<std::string> ResolveConfig(const v1::SubmitSweepRequest& request) const;
  absl::StatusOr<v1::Experiment> Get(const std::string& id, const Caller& caller = {});
  // The caller's experiments (an operator's: all), without config_json (GetExperiment
  // has it), so one large configuration cannot break listing.
  absl::StatusOr<v1::ListExperimentsResponse> List(const v1::ListExperimentsRequest& request,
                                                   const Caller& caller = {});
  absl::StatusOr<v1::Experiment> Cancel(const std::string& id, const Caller& caller = {});
  absl::StatusOr<v1::GetReportResponse> Report(const v1::GetReportRequest& request,
                                               const Caller& caller = {});
  // A finished experiment's record and directory; FAILED_PRECONDITION before it ends.
  absl::Status Delete(const std::string& id, const Caller& caller = {});
  // Where a new watcher starts: the latest progress event, else the stored state.
  absl::StatusOr<v1::ExperimentProgress> Snapshot(const std::string& id,
                                                  const Caller& caller = {});

  // A SUCCEEDED experiment's arm (request.arm_id, or the winner: arm_promotion.h
  // WinningArm) exported as the next version of request.model_name in the model
  // repository and loaded (ModelControl::AddVersion). FAILED_PRECONDITION without a
  // model repository (set_model_control) or for an experiment that did not succeed;
  // NOT_FOUND for an unknown experiment or arm (naming the arms); INVALID_ARGUMENT for
  // a model name the repository refuses (ModelRepository::ValidateModelName).
  absl::StatusOr<v1::PromoteArmResponse> Promote(const v1::PromoteArmRequest& request,
                                                 const Caller& caller = {});
  // Where PromoteArm writes and loads; null (the default): promotion is refused.
  void set_model_control(ModelControl* control) { model_control_ = control; }

  ProgressHub* hub() const { return hub_; }

 private:
  // The parsed configuration of a request and, in *stored, the JSON to store.
  absl::StatusOr<SweepConfig> Parse(const v1::SubmitSweepRequest& request,
                                    std::string* stored) const;
  // The record when the caller may see it; NOT_FOUND (the store's message) if not.
  absl::StatusOr<ExperimentRecord> Visible(const std::string& id, const Caller& caller);

  ExperimentStore* store_;
  ExperimentRunner* runner_;
  ProgressHub* hub_;
  ExperimentLimits limits_;
  ModelControl* model_control_ = nullptr;
};

}  // namespace flashtick
