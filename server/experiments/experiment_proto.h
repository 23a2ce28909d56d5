// Conversions between the experiment service's wire messages (flashtick.v1) and
// the sweep engine and store: store records to Experiment/ArmStatus, and engine
// progress to ExperimentProgress. The configuration needs none of its own: its
// message is the schema (research/sweep/sweep_config.h).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flashtick/v1/experiments.pb.h"
#include "server/experiments/experiment_store.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {

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
