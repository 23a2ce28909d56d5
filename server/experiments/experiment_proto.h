// Conversions between the experiment service's wire messages (flashtick.v1) and
// the sweep engine and store: SweepConfig both ways (the typed proto config is
// turned into the engine's JSON schema and parsed by the one validating parser,
// so a typed submit and a JSON submit fail the same way), store records to
// Experiment/ArmStatus, and engine progress to ExperimentProgress.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flashtick/v1/experiments.pb.h"
#include "server/experiments/experiment_store.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {

// The engine's JSON for a typed config: only the fields that are set (non-zero)
// are written, so defaults fill the rest. Fields the engine cannot honour (a fixed
// α, purge/embargo in steps, bf16 training) are INVALID_ARGUMENT with the reason.
absl::StatusOr<std::string> ProtoConfigToJson(const v1::SweepConfig& config);
// The typed view of a parsed config (for Experiment.config).
v1::SweepConfig ConfigToProto(const SweepConfig& config);

v1::ExperimentState ToProtoState(ExpState state);
v1::ExperimentState ArmStateToProto(const std::string& arm_state);
google::protobuf::Timestamp ToTimestamp(int64_t micros);

// An Experiment from its record and arms (config_json parsed into config).
v1::Experiment ToProto(const ExperimentRecord& record, const std::vector<ArmRecord>& arms);

v1::ExperimentProgress ProgressFromEvent(const std::string& experiment_id, const SweepEvent& e,
                                         int arms);
// A state-change event (phase "state").
v1::ExperimentProgress StateEvent(const ExperimentRecord& record, const std::string& message);

}  // namespace flashtick
