// ArmResult JSON and pooled metrics (see arm_result.h). Reading back is strict
// about types (a state file written by another version is refused with DataLoss
// naming the field) because a resumed arm must not continue from a misread state.
#include "research/sweep/arm_result.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "research/stats/moments.h"

namespace flashtick {
namespace {

using nlohmann::json;

absl::Status Bad(const std::string& field) {
  return absl::DataLossError(absl::StrCat("arm state: field '", field,
                                          "' is missing or has the wrong type"));
}

template <typename T>
absl::Status Read(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end()) return Bad(key);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return Bad(key);
  } else if constexpr (std::is_same_v<T, double>) {
    if (!it->is_number()) return Bad(key);
  } else {
    if (!it->is_number_integer()) return Bad(key);
  }
  *out = it->get<T>();
  return absl::OkStatus();
}

#define FT_READ(j, key, out)                                   \
  do {                                                         \
    absl::Status _s = Read(j, key, out);                       \
    if (!_s.ok()) return _s;                                   \
  } while (0)

}  // namespace

const char* ArmStateName(ArmState s) {
  switch (s) {
    case ArmState::kPending:
      return "pending";
    case ArmState::kRunning:
      return "running";
    case ArmState::kDone:
      return "done";
    case ArmState::kFailed:
      return "failed";
    case ArmState::kCancelled:
      return "cancelled";
  }
  return "pending";
}

double ArmResult::epochs() const {
  return train_samples > 0 ? static_cast<double>(tokens) / train_samples : 0.0;
}

double ArmResult::seconds_per_epoch() const {
  const double e = epochs();
  return e > 0 ? train_seconds / e : 0.0;
}

double ArmResult::tokens_per_second() const {
  return train_seconds > 0 ? static_cast<double>(tokens) / train_seconds : 0.0;
}

double ArmResult::mean_plain_step_seconds() const {
  return plain_steps > 0 ? plain_step_seconds / static_cast<double>(plain_steps) : 0.0;
}

double ArmResult::mean_refresh_step_seconds() const {
  return refresh_steps > 0 ? refresh_step_seconds / static_cast<double>(refresh_steps) : 0.0;
}

std::vector<double> ArmResult::daily_returns() const {
  std::vector<double> r;
  for (const DayResult& d : days) r.push_back(d.daily_return);
  return r;
}

absl::StatusOr<ClassificationMetrics> ArmResult::Pooled() const {
  std::vector<ClassificationMetrics> m;
  for (const DayResult& d : days) m.push_back(d.metrics);
  return PoolMetrics(m);
}

double ArmResult::Sharpe() const { return SharpeRatio(daily_returns()); }

absl::StatusOr<ClassificationMetrics> PoolMetrics(const std::vector<ClassificationMetrics>& days) {
  ClassificationMetrics m;
  double loss = 0;
  for (const ClassificationMetrics& d : days) {
    for (int a = 0; a < kNumClasses; ++a) {
      for (int b = 0; b < kNumClasses; ++b) m.confusion[a][b] += d.confusion[a][b];
    }
    m.samples += d.samples;
    loss += d.log_loss * d.samples;
  }
  if (m.samples == 0) return absl::InvalidArgumentError("pooled metrics: no scored samples");
  m.log_loss = loss / m.samples;
  ScoreConfusion(&m);
  return m;
}

json MetricsToJson(const ClassificationMetrics& m) {
  json confusion = json::array();
  for (const auto& row : m.confusion) confusion.push_back(row);
  return {{"samples", m.samples},     {"accuracy", m.accuracy}, {"macro_f1", m.macro_f1},
          {"log_loss", m.log_loss},   {"confusion", confusion}, {"precision", m.precision},
          {"recall", m.recall},       {"f1", m.f1}};
}

absl::StatusOr<ClassificationMetrics> MetricsFromJson(const json& j) {
  ClassificationMetrics m;
  if (!j.is_object()) return Bad("metrics");
  FT_READ(j, "samples", &m.samples);
  FT_READ(j, "accuracy", &m.accuracy);
  FT_READ(j, "macro_f1", &m.macro_f1);
  FT_READ(j, "log_loss", &m.log_loss);
  auto c = j.find("confusion");
  if (c == j.end() || !c->is_array() || c->size() != kNumClasses) return Bad("confusion");
  for (int a = 0; a < kNumClasses; ++a) {
    const json& row = (*c)[a];
    if (!row.is_array() || row.size() != kNumClasses) return Bad("confusion");
    for (int b = 0; b < kNumClasses; ++b) {
      if (!row[b].is_number_integer()) return Bad("confusion");
      m.confusion[a][b] = row[b].get<int64_t>();
    }
  }
  for (const char* key : {"precision", "recall", "f1"}) {
    auto v = j.find(key);
    if (v == j.end() || !v->is_array() || v->size() != kNumClasses) return Bad(key);
    auto& dst = std::string(key) == "precision" ? m.precision
                : std::string(key) == "recall"  ? m.recall
                                                : m.f1;
    for (int a = 0; a < kNumClasses; ++a) {
      if (!(*v)[a].is_number()) return Bad(key);
      dst[a] = (*v)[a].get<double>();
    }
  }
  return m;
}

json ArmResultToJson(const ArmResult& a) {
  json days = json::array();
  for (const DayResult& d : a.days) {
    days.push_back({{"day", d.day},
                    {"date", d.date},
                    {"fold", d.fold},
                    {"metrics", MetricsToJson(d.metrics)},
                    {"daily_return", d.daily_return},
                    {"gross", d.gross},
                    {"trades", d.trades}});
  }
  json events = json::array();
  for (const EventTally& e : a.events) {
    events.push_back({{"lag", e.lag},
                      {"events", e.events},
                      {"hits", e.hits},
                      {"calls", e.calls},
                      {"call_hits", e.call_hits},
                      {"attention_events", e.attention_events},
                      {"cue_weight", e.cue_weight},
                      {"self_weight", e.self_weight},
                      {"cue_rollout", e.cue_rollout}});
  }
  json curve = json::array();
  for (const LossPoint& p : a.loss_curve) curve.push_back({p.step, p.loss});
  json validation = json::array();
  for (const LossPoint& p : a.validation_curve) validation.push_back({p.step, p.loss});
  return {{"arm_id", a.arm_id},
          {"context", a.context},
          {"seed", a.seed},
          {"state", ArmStateName(a.state)},
          {"error", a.error},
          {"folds", a.folds},
          {"evaluated_folds", a.evaluated_folds},
          {"step", a.step},
          {"total_steps", a.total_steps},
          {"batch", a.batch},
          {"loss", a.loss},
          {"train_seconds", a.train_seconds},
          {"eval_seconds", a.eval_seconds},
          {"tokens", a.tokens},
          {"train_samples", a.train_samples},
          {"peak_memory_bytes", a.peak_memory_bytes},
          {"parameters", a.parameters},
          {"kernel_path", a.kernel_path},
          {"backend", a.backend},
          {"ran_on", a.ran_on},
          {"plain_steps", a.plain_steps},
          {"plain_step_seconds", a.plain_step_seconds},
          {"refresh_steps", a.refresh_steps},
          {"refresh_step_seconds", a.refresh_step_seconds},
          {"days", days},
          {"events", events},
          {"loss_curve", curve},
          {"skipped_steps", a.skipped_steps},
          {"stop_reason", a.stop_reason},
          {"validation_curve", validation},
          {"best_validation_loss", a.best_validation_loss},
          {"best_validation_step", a.best_validation_step}};
}

absl::StatusOr<ArmResult> ArmResultFromJson(const json& j) {
  if (!j.is_object()) return Bad("(top level)");
  ArmResult a;
  FT_READ(j, "arm_id", &a.arm_id);
  FT_READ(j, "context", &a.context);
  FT_READ(j, "seed", &a.seed);
  std::string state;
  FT_READ(j, "state", &state);
  bool known = false;
  for (ArmState s : {ArmState::kPending, ArmState::kRunning, ArmState::kDone, ArmState::kFailed,
                     ArmState::kCancelled}) {
    if (state == ArmStateName(s)) a.state = s, known = true;
  }
  if (!known) return Bad("state");
  FT_READ(j, "error", &a.error);
  FT_READ(j, "folds", &a.folds);
  FT_READ(j, "evaluated_folds", &a.evaluated_folds);
  FT_READ(j, "step", &a.step);
  FT_READ(j, "total_steps", &a.total_steps);
  FT_READ(j, "batch", &a.batch);
  FT_READ(j, "loss", &a.loss);
  FT_READ(j, "train_seconds", &a.train_seconds);
  FT_READ(j, "eval_seconds", &a.eval_seconds);
  FT_READ(j, "tokens", &a.tokens);
  FT_READ(j, "train_samples", &a.train_samples);
  FT_READ(j, "peak_memory_bytes", &a.peak_memory_bytes);
  FT_READ(j, "parameters", &a.parameters);
  FT_READ(j, "kernel_path", &a.kernel_path);
  FT_READ(j, "backend", &a.backend);
  if (j.contains("ran_on")) FT_READ(j, "ran_on", &a.ran_on);  // absent in older states
  // Step counts and seconds by kind: absent (0) in states written before they existed,
  // strict about their type when present.
  for (auto [key, out] : {std::pair{"plain_steps", &a.plain_steps}, {"refresh_steps", &a.refresh_steps}}) {
    if (j.contains(key)) FT_READ(j, key, out);
  }
  for (auto [key, out] : {std::pair{"plain_step_seconds", &a.plain_step_seconds},
                          {"refresh_step_seconds", &a.refresh_step_seconds}}) {
    if (j.contains(key)) FT_READ(j, key, out);
  }
  auto days = j.find("days");
  if (days == j.end() || !days->is_array()) return Bad("days");
  for (const json& d : *days) {
    DayResult r;
    if (!d.is_object()) return Bad("days[]");
    FT_READ(d, "day", &r.day);
    FT_READ(d, "date", &r.date);
    FT_READ(d, "fold", &r.fold);
    FT_READ(d, "daily_return", &r.daily_return);
    FT_READ(d, "gross", &r.gross);
    FT_READ(d, "trades", &r.trades);
    auto m = d.find("metrics");
    if (m == d.end()) return Bad("days[].metrics");
    auto metrics = MetricsFromJson(*m);
    if (!metrics.ok()) return metrics.status();
    r.metrics = *metrics;
    a.days.push_back(std::move(r));
  }
  auto events = j.find("events");
  if (events == j.end() || !events->is_array()) return Bad("events");
  for (const json& e : *events) {
    EventTally t;
    if (!e.is_object()) return Bad("events[]");
    FT_READ(e, "lag", &t.lag);
    FT_READ(e, "events", &t.events);
    FT_READ(e, "hits", &t.hits);
    if (auto c = e.find("calls"); c != e.end() && c->is_number_integer()) t.calls = c->get<int64_t>();
    if (auto c = e.find("call_hits"); c != e.end() && c->is_number_integer()) {
      t.call_hits = c->get<int64_t>();
    }
    // Optional: state files written before the attention diagnostic have none.
    if (auto n = e.find("attention_events"); n != e.end() && n->is_number_integer()) {
      t.attention_events = n->get<int64_t>();
      for (auto [key, out] : {std::pair{"cue_weight", &t.cue_weight}, {"self_weight", &t.self_weight}}) {
        auto w = e.find(key);
        if (w == e.end() || !w->is_array()) return Bad(absl::StrCat("events[].", key));
        for (const json& x : *w) {
          if (!x.is_number()) return Bad(absl::StrCat("events[].", key, "[]"));
          out->push_back(x.get<double>());
        }
      }
      if (t.cue_weight.size() != t.self_weight.size()) return Bad("events[].self_weight");
      // Optional too: state files written before the rollout have none.
      if (auto c = e.find("cue_rollout"); c != e.end()) {
        if (!c->is_number()) return Bad("events[].cue_rollout");
        t.cue_rollout = c->get<double>();
      }
    }
    a.events.push_back(t);
  }
  auto curve = j.find("loss_curve");
  if (curve == j.end() || !curve->is_array()) return Bad("loss_curve");
  for (const json& p : *curve) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number()) {
      return Bad("loss_curve[]");
    }
    a.loss_curve.push_back({p[0].get<int64_t>(), p[1].get<double>()});
  }
  // Early-stopping fields: absent in states written before they existed.
  if (auto it = j.find("skipped_steps"); it != j.end() && it->is_number_integer()) {
    a.skipped_steps = it->get<int64_t>();
  }
  if (auto it = j.find("stop_reason"); it != j.end() && it->is_string()) {
    a.stop_reason = it->get<std::string>();
  }
  if (auto it = j.find("best_validation_loss"); it != j.end() && it->is_number()) {
    a.best_validation_loss = it->get<double>();
  }
  if (auto it = j.find("best_validation_step"); it != j.end() && it->is_number_integer()) {
    a.best_validation_step = it->get<int64_t>();
  }
  if (auto it = j.find("validation_curve"); it != j.end() && it->is_array()) {
    for (const json& p : *it) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number()) {
        return Bad("validation_curve[]");
      }
      a.validation_curve.push_back({p[0].get<int64_t>(), p[1].get<double>()});
    }
  }
  return a;
}

}  // namespace flashtick
