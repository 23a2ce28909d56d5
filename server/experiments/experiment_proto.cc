// Wire conversions (see experiment_proto.h).
#include "server/experiments/experiment_proto.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "research/stats/moments.h"
#include "research/sweep/arm_result.h"

namespace flashtick {

using nlohmann::json;

v1::ExperimentState ToProtoState(ExpState s) { return static_cast<v1::ExperimentState>(s); }

v1::ExperimentState ArmStateToProto(const std::string& s) {
  if (s == "running") return v1::EXPERIMENT_STATE_RUNNING;
  if (s == "done") return v1::EXPERIMENT_STATE_SUCCEEDED;
  if (s == "failed") return v1::EXPERIMENT_STATE_FAILED;
  if (s == "cancelled") return v1::EXPERIMENT_STATE_CANCELLED;
  return v1::EXPERIMENT_STATE_QUEUED;
}

google::protobuf::Timestamp ToTimestamp(int64_t micros) {
  google::protobuf::Timestamp t;
  t.set_seconds(micros / 1000000);
  t.set_nanos(static_cast<int32_t>((micros % 1000000) * 1000));
  return t;
}

v1::Experiment ToProto(const ExperimentRecord& r, const std::vector<ArmRecord>& arms) {
  v1::Experiment e;
  e.set_id(r.id);
  e.set_state(ToProtoState(r.state));
  e.set_config_json(r.config_json);
  e.set_directory(r.dir);
  e.set_error(r.error);
  auto config = ParseSweepConfig(r.config_json);
  if (config.ok()) *e.mutable_config() = SweepConfigToProto(*config);
  *e.mutable_created_at() = ToTimestamp(r.created_us);
  if (r.started_us > 0) *e.mutable_started_at() = ToTimestamp(r.started_us);
  if (r.finished_us > 0) *e.mutable_finished_at() = ToTimestamp(r.finished_us);
  for (const ArmRecord& a : arms) {
    v1::ArmStatus* s = e.add_arms();
    s->set_arm_id(a.arm_id);
    s->set_context_length(a.context);
    s->set_seed(a.seed);
    s->set_state(ArmStateToProto(a.state));
    s->set_arm_state(a.state);
    s->set_epoch(static_cast<int32_t>(a.epoch));
    s->set_epochs(a.epoch);
    s->set_step(a.step);
    s->set_total_steps(a.total_steps);
    s->set_train_loss(a.loss);
    s->set_tokens_per_second(a.tokens_per_second);
    s->set_peak_memory_bytes(a.peak_memory_bytes);
    s->set_kernel_path(a.kernel_path);
    s->set_fold(a.fold);
    s->set_folds(a.folds);
    if (!a.result_json.empty()) {
      const json j = json::parse(a.result_json, nullptr, false);
      auto result = j.is_discarded() ? absl::StatusOr<ArmResult>(absl::DataLossError("json"))
                                     : ArmResultFromJson(j);
      if (result.ok() && !result->days.empty()) {
        const double sharpe = result->Sharpe();
        s->set_sharpe(std::isfinite(sharpe) ? sharpe : 0.0);
        auto pooled = result->Pooled();
        if (pooled.ok()) s->set_accuracy(pooled->accuracy);
      }
    }
  }
  if (!r.verdict_json.empty()) {
    const json v = json::parse(r.verdict_json, nullptr, false);
    if (v.is_object()) {
      v1::Verdict* out = e.mutable_verdict();
      out->set_passed(v.value("passed", false));
      out->set_winner_context_length(v.value("winner_context", int64_t{0}));
      out->set_deflated_sharpe(v.value("dsr", 0.0));
      out->set_pbo(v.value("pbo", 0.0));
      out->set_summary(v.value("summary", std::string()));
    }
  }
  return e;
}

v1::ExperimentProgress ProgressFromEvent(const std::string& id, const SweepEvent& e, int arms) {
  v1::ExperimentProgress p;
  p.set_experiment_id(id);
  p.set_state(v1::EXPERIMENT_STATE_RUNNING);
  p.set_arm_id(e.arm.arm_id);
  p.set_context_length(e.arm.context);
  p.set_epoch(static_cast<int32_t>(e.arm.epoch));
  p.set_epochs(e.arm.epoch);
  p.set_step(e.arm.step);
  p.set_total_steps(e.arm.total_steps);
  p.set_loss(e.arm.loss);
  p.set_eta_seconds(e.eta_seconds);
  *p.mutable_time() = ToTimestamp(NowMicros());
  p.set_fold(e.arm.fold);
  p.set_folds(e.arm.folds);
  p.set_phase(e.arm.phase);
  p.set_arm_index(e.arm.arm_index);
  p.set_arms(arms);
  return p;
}

v1::ExperimentProgress StateEvent(const ExperimentRecord& r, const std::string& message) {
  v1::ExperimentProgress p;
  p.set_experiment_id(r.id);
  p.set_state(ToProtoState(r.state));
  p.set_phase("state");
  p.set_message(message);
  *p.mutable_time() = ToTimestamp(NowMicros());
  return p;
}

}  // namespace flashtick
