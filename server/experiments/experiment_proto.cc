// Wire conversions (see experiment_proto.h). proto3 cannot tell an unset number
// from 0, so 0 (or "") means "the default" throughout the typed config.
#include "server/experiments/experiment_proto.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "research/stats/moments.h"
#include "research/sweep/arm_result.h"

namespace flashtick {
namespace {

using nlohmann::json;

absl::Status Unsupported(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("sweep config: ", field, " ", why));
}

}  // namespace

absl::StatusOr<std::string> ProtoConfigToJson(const v1::SweepConfig& c) {
  json j = json::object();
  if (!c.name().empty()) j["name"] = c.name();
  if (c.context_lengths_size() > 0) j["contexts"] = std::vector<int64_t>(
      c.context_lengths().begin(), c.context_lengths().end());
  if (c.seeds_size() > 0) j["seeds"] = std::vector<uint64_t>(c.seeds().begin(), c.seeds().end());
  json model = json::object();
  const v1::ModelArchitecture& a = c.architecture();
  if (a.width() != 0) model["width"] = a.width();
  if (a.layers() != 0) model["layers"] = a.layers();
  if (a.heads() != 0) model["heads"] = a.heads();
  if (a.kv_heads() != 0) model["kv_heads"] = a.kv_heads();
  if (a.mlp_ratio() != 0) model["mlp_ratio"] = a.mlp_ratio();
  if (!model.empty()) j["model"] = model;

  json opt = json::object(), training = json::object();
  const v1::OptimizerConfig& o = c.optimizer();
  auto put = [](json& dst, const char* key, double v) {
    if (v != 0) dst[key] = v;
  };
  if (o.has_adamw()) {
    opt["name"] = "adamw";
    put(opt, "learning_rate", o.adamw().learning_rate());
    put(opt, "beta1", o.adamw().beta1());
    put(opt, "beta2", o.adamw().beta2());
    put(opt, "epsilon", o.adamw().epsilon());
    put(opt, "weight_decay", o.adamw().weight_decay());
  } else if (o.has_sophia_h()) {
    opt["name"] = "sophia_h";
    put(opt, "learning_rate", o.sophia_h().learning_rate());
    put(opt, "beta1", o.sophia_h().beta1());
    put(opt, "beta2", o.sophia_h().beta2());
    put(opt, "rho", o.sophia_h().rho());
    put(opt, "weight_decay", o.sophia_h().weight_decay());
    if (o.sophia_h().hessian_interval() != 0) {
      opt["hessian_interval"] = o.sophia_h().hessian_interval();
    }
  }
  if (o.batch_size() != 0) {
    // Every arm takes the same tokens per step: batch_size sequences of the longest N.
    int64_t longest = 0;
    for (int64_t n : c.context_lengths()) longest = std::max(longest, n);
    if (longest == 0) longest = 32768;
    opt["tokens_per_step"] = static_cast<int64_t>(o.batch_size()) * longest;
  }
  if (o.warmup_steps() != 0) opt["warmup_steps"] = o.warmup_steps();
  put(opt, "grad_clip_norm", o.grad_clip_norm());
  if (o.epochs() != 0) training["first_fold_epochs"] = o.epochs();
  if (!o.precision().empty() && o.precision() != "fp32") {
    return Unsupported("optimizer.precision", absl::StrCat(
        "'", o.precision(), "': training runs in fp32 on every backend (bf16 is the serving "
        "path, which the precision check compares against float64)"));
  }
  if (!opt.empty()) j["optimizer"] = opt;
  if (!training.empty()) j["training"] = training;

  if (c.data().has_synthetic()) {
    const v1::SyntheticSource& s = c.data().synthetic();
    json syn = json::object();
    if (!s.generator().empty()) syn["generator"] = s.generator();
    if (s.seed() != 0) syn["seed"] = s.seed();
    if (s.days() != 0) syn["days"] = s.days();
    if (s.cue_lags_size() > 0) syn["lags"] = std::vector<int64_t>(s.cue_lags().begin(),
                                                                  s.cue_lags().end());
    j["data"] = {{"synthetic", syn}};
  } else if (c.data().has_csv()) {
    const v1::CsvSource& s = c.data().csv();
    json csv = {{"paths", json::array({s.path()})}};
    if (s.format() == "trades_quotes" || s.format() == "quotes") {
      csv["format"] = "quotes";
    } else if (!s.format().empty()) {
      csv["format"] = s.format();  // "bars", or an error from the parser naming it
    }
    if (!s.instrument().empty()) csv["instrument"] = s.instrument();
    j["data"] = {{"csv", csv}};
  }
  if (c.labels().alpha() != 0) {
    return Unsupported("labels.alpha", "must be 0: α is balanced on each fold's training days");
  }
  if (c.labels().horizon_steps() != 0) j["labels"] = {{"horizon", c.labels().horizon_steps()}};
  const v1::WalkForwardConfig& w = c.walk_forward();
  if (w.purge_steps() != 0 || w.embargo_steps() != 0) {
    return Unsupported("walk_forward.purge_steps/embargo_steps",
                       "must be 0: the purge follows from N and k, the embargo is in days");
  }
  if (w.step_days() != 0 && w.step_days() != w.test_days()) {
    return Unsupported("walk_forward.step_days", "must be 0 or equal test_days (folds tile)");
  }
  json wf = json::object();
  if (w.train_days() != 0) wf["train_days"] = w.train_days();
  if (w.test_days() != 0) wf["test_days"] = w.test_days();
  if (!wf.empty()) j["walk_forward"] = wf;
  json gates = json::object();
  put(gates, "min_dsr", c.gates().min_deflated_sharpe());
  put(gates, "max_pbo", c.gates().max_pbo());
  if (!gates.empty()) j["gates"] = gates;
  if (c.gates().cost_bps() != 0) j["cost_bps"] = c.gates().cost_bps();
  if (!c.device().empty()) j["device"] = c.device();
  if (c.max_parallel_arms() != 0) j["max_parallel_arms"] = c.max_parallel_arms();
  if (c.replicas_per_arm() != 0) j["replicas_per_arm"] = c.replicas_per_arm();
  return j.dump();
}

v1::SweepConfig ConfigToProto(const SweepConfig& c) {
  v1::SweepConfig p;
  p.set_name(c.name);
  for (int64_t n : c.contexts) p.add_context_lengths(n);
  for (uint64_t s : c.seeds) p.add_seeds(s);
  v1::ModelArchitecture* a = p.mutable_architecture();
  a->set_width(c.model.width);
  a->set_layers(c.model.layers);
  a->set_heads(c.model.heads);
  a->set_kv_heads(c.model.kv_heads);
  a->set_mlp_ratio(c.model.mlp_ratio);
  v1::OptimizerConfig* o = p.mutable_optimizer();
  if (c.optimizer.kind == OptimizerKind::kSophiaH) {
    v1::SophiaHConfig* s = o->mutable_sophia_h();
    s->set_learning_rate(c.optimizer.learning_rate);
    s->set_beta1(c.optimizer.hyper.beta1);
    s->set_beta2(c.optimizer.hyper.beta2);
    s->set_rho(c.optimizer.hyper.rho);
    s->set_weight_decay(c.optimizer.hyper.weight_decay);
    s->set_hessian_interval(static_cast<int32_t>(c.optimizer.hessian_interval));
  } else {
    v1::AdamWConfig* s = o->mutable_adamw();
    s->set_learning_rate(c.optimizer.learning_rate);
    s->set_beta1(c.optimizer.hyper.beta1);
    s->set_beta2(c.optimizer.hyper.beta2);
    s->set_epsilon(c.optimizer.hyper.eps);
    s->set_weight_decay(c.optimizer.hyper.weight_decay);
  }
  const int64_t longest = c.contexts.empty() ? 1 : c.contexts.back();
  o->set_batch_size(static_cast<int32_t>(c.BatchFor(longest)));
  o->set_epochs(static_cast<int32_t>(std::ceil(c.training.first_fold_epochs)));
  o->set_warmup_steps(c.optimizer.warmup_steps);
  o->set_grad_clip_norm(c.optimizer.grad_clip_norm);
  o->set_precision("fp32");
  if (c.data.csv) {
    v1::CsvSource* s = p.mutable_data()->mutable_csv();
    s->set_path(c.data.csv_data.paths.empty() ? "" : c.data.csv_data.paths.front());
    s->set_format(c.data.csv_data.format == "quotes" ? "trades_quotes" : "bars");
    s->set_instrument(c.data.csv_data.instrument);
  } else {
    v1::SyntheticSource* s = p.mutable_data()->mutable_synthetic();
    s->set_generator(c.data.synthetic.generator);
    s->set_seed(c.data.synthetic.seed);
    s->set_days(c.data.synthetic.days);
    for (int64_t lag : c.data.synthetic.lags) s->add_cue_lags(lag);
  }
  p.mutable_labels()->set_horizon_steps(c.horizon);
  p.mutable_walk_forward()->set_train_days(c.walk_forward.train_days);
  p.mutable_walk_forward()->set_test_days(c.walk_forward.test_days);
  p.mutable_walk_forward()->set_step_days(c.walk_forward.test_days);
  p.mutable_gates()->set_min_deflated_sharpe(c.gates.min_dsr);
  p.mutable_gates()->set_max_pbo(c.gates.max_pbo);
  p.mutable_gates()->set_cost_bps(c.cost_bps);
  p.set_device(c.device);
  p.set_max_parallel_arms(c.max_parallel_arms);
  p.set_replicas_per_arm(c.replicas_per_arm);
  return p;
}

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
  if (config.ok()) *e.mutable_config() = ConfigToProto(*config);
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
