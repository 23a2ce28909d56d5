// ArmResult JSON and pooled metrics (see arm_result.h). Reading back is strict
// about types (a state file written by another version is refused with DataLoss
// naming the field) because a resumed arm must not continue from a misread state.
#include "research/sweep/arm_result.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "research/stats/moments.h"
#include "research/sweep/json_field_table.h"

namespace flashtick {
namespace {

using nlohmann::json;

absl::Status Bad(const std::string& field) { return JsonFieldLost("arm state", field); }

// The scalar fields of an arm's state, a test day and an event family: each written
// and read from its row. Optional rows came after the first state files.
const JsonField<ArmResult> kArmFields[] = {
    {"arm_id", &ArmResult::arm_id},
    {"context", &ArmResult::context},
    {"seed", &ArmResult::seed},
    {"error", &ArmResult::error},
    {"folds", &ArmResult::folds},
    {"evaluated_folds", &ArmResult::evaluated_folds},
    {"step", &ArmResult::step},
    {"total_steps", &ArmResult::total_steps},
    {"batch", &ArmResult::batch},
    {"loss", &ArmResult::loss},
    {"train_seconds", &ArmResult::train_seconds},
    {"eval_seconds", &ArmResult::eval_seconds},
    {"tokens", &ArmResult::tokens},
    {"train_samples", &ArmResult::train_samples},
    {"peak_memory_bytes", &ArmResult::peak_memory_bytes},
    {"parameters", &ArmResult::parameters},
    {"kernel_path", &ArmResult::kernel_path},
    {"backend", &ArmResult::backend},
    {"ran_on", &ArmResult::ran_on, true},
    {"plain_steps", &ArmResult::plain_steps, true},
    {"plain_step_seconds", &ArmResult::plain_step_seconds, true},
    {"refresh_steps", &ArmResult::refresh_steps, true},
    {"refresh_step_seconds", &ArmResult::refresh_step_seconds, true},
    {"skipped_steps", &ArmResult::skipped_steps, true},
    {"stop_reason", &ArmResult::stop_reason, true},
    {"restart_choice", &ArmResult::restart_choice, true},
    {"stall_restarts_begun", &ArmResult::stall_restarts_begun, true},
    {"best_validation_loss", &ArmResult::best_validation_loss, true},
    {"best_validation_step", &ArmResult::best_validation_step, true},
};

const JsonField<ClassificationMetrics> kMetricsFields[] = {
    {"samples", &ClassificationMetrics::samples},
    {"accuracy", &ClassificationMetrics::accuracy},
    {"macro_f1", &ClassificationMetrics::macro_f1},
    {"log_loss", &ClassificationMetrics::log_loss},
};

const JsonField<DayResult> kDayFields[] = {
    {"day", &DayResult::day},
    {"date", &DayResult::date},
    {"fold", &DayResult::fold},
    {"daily_return", &DayResult::daily_return},
    {"gross", &DayResult::gross},
    {"trades", &DayResult::trades},
};

const JsonField<EventTally> kEventFields[] = {
    {"lag", &EventTally::lag},
    {"events", &EventTally::events},
    {"hits", &EventTally::hits},
    {"calls", &EventTally::calls, true},
    {"call_hits", &EventTally::call_hits, true},
};

const JsonField<FirstFoldStart> kStartFields[] = {
    {"index", &FirstFoldStart::index},
    {"seed", &FirstFoldStart::seed},
    {"steps", &FirstFoldStart::steps},
    {"ended", &FirstFoldStart::ended},
    {"loss", &FirstFoldStart::loss},
    {"best_validation_loss", &FirstFoldStart::best_validation_loss},
    {"best_validation_step", &FirstFoldStart::best_validation_step},
};

json CurveJson(const std::vector<LossPoint>& c) {
  json out = json::array();
  for (const LossPoint& p : c) out.push_back({p.step, p.loss});
  return out;
}

// The curve of [step, loss] pairs at j[key]; `name` is its path for the message.
absl::Status ReadCurve(const json& j, const char* key, const std::string& name,
                       std::vector<LossPoint>* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return Bad(name);
  for (const json& p : *it) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number()) {
      return Bad(name + "[]");
    }
    out->push_back({p[0].get<int64_t>(), p[1].get<double>()});
  }
  return absl::OkStatus();
}

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
  json j = {{"confusion", confusion}, {"precision", m.precision}, {"recall", m.recall},
            {"f1", m.f1}};
  WriteJsonFields<ClassificationMetrics>(m, kMetricsFields, &j);
  return j;
}

absl::StatusOr<ClassificationMetrics> MetricsFromJson(const json& j) {
  ClassificationMetrics m;
  if (absl::Status s = ReadJsonFields<ClassificationMetrics>(j, kMetricsFields, "arm state",
                                                              "metrics", &m);
      !s.ok()) {
    return s;
  }
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
    json day = {{"metrics", MetricsToJson(d.metrics)}};
    WriteJsonFields<DayResult>(d, kDayFields, &day);
    days.push_back(std::move(day));
  }
  json events = json::array();
  for (const EventTally& e : a.events) {
    json event = {{"attention_events", e.attention_events},
                  {"cue_weight", e.cue_weight},
                  {"self_weight", e.self_weight},
                  {"cue_rollout", e.cue_rollout}};
    WriteJsonFields<EventTally>(e, kEventFields, &event);
    events.push_back(std::move(event));
  }
  json j = {{"state", ArmStateName(a.state)},
            {"days", days},
            {"events", events},
            {"loss_curve", CurveJson(a.loss_curve)},
            {"validation_curve", CurveJson(a.validation_curve)}};
  WriteJsonFields<ArmResult>(a, kArmFields, &j);
  // Only with stall restarts: an ordinary arm's state is as before.
  if (!a.stall_starts.empty()) {
    json starts = json::array();
    for (const FirstFoldStart& s : a.stall_starts) {
      json start = {{"loss_curve", CurveJson(s.loss_curve)},
                    {"validation_curve", CurveJson(s.validation_curve)}};
      WriteJsonFields<FirstFoldStart>(s, kStartFields, &start);
      starts.push_back(std::move(start));
    }
    j["stall_starts"] = std::move(starts);
  }
  return j;
}

absl::StatusOr<ArmResult> ArmResultFromJson(const json& j) {
  ArmResult a;
  if (absl::Status s = ReadJsonFields<ArmResult>(j, kArmFields, "arm state", "", &a); !s.ok()) {
    return s;
  }
  const auto state_it = j.find("state");
  if (state_it == j.end() || !state_it->is_string()) return Bad("state");
  const std::string& state = state_it->get_ref<const std::string&>();
  bool known = false;
  for (ArmState s : {ArmState::kPending, ArmState::kRunning, ArmState::kDone, ArmState::kFailed,
                     ArmState::kCancelled}) {
    if (state == ArmStateName(s)) a.state = s, known = true;
  }
  if (!known) return Bad("state");
  auto days = j.find("days");
  if (days == j.end() || !days->is_array()) return Bad("days");
  for (const json& d : *days) {
    DayResult r;
    if (absl::Status s = ReadJsonFields<DayResult>(d, kDayFields, "arm state", "days[]", &r);
        !s.ok()) {
      return s;
    }
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
    if (absl::Status s = ReadJsonFields<EventTally>(e, kEventFields, "arm state", "events[]", &t);
        !s.ok()) {
      return s;
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
  if (absl::Status s = ReadCurve(j, "loss_curve", "loss_curve", &a.loss_curve); !s.ok()) {
    return s;
  }
  // The validation curve: absent in states written before early stopping existed.
  if (auto it = j.find("validation_curve"); it != j.end() && it->is_array()) {
    if (absl::Status s = ReadCurve(j, "validation_curve", "validation_curve", &a.validation_curve);
        !s.ok()) {
      return s;
    }
  }
  // Absent unless the arm set a start aside (training.stall_restarts).
  if (auto it = j.find("stall_starts"); it != j.end()) {
    if (!it->is_array()) return Bad("stall_starts");
    for (const json& e : *it) {
      FirstFoldStart s;
      if (absl::Status st = ReadJsonFields<FirstFoldStart>(e, kStartFields, "arm state",
                                                           "stall_starts[]", &s);
          !st.ok()) {
        return st;
      }
      for (auto [key, out] : {std::pair{"loss_curve", &s.loss_curve},
                              std::pair{"validation_curve", &s.validation_curve}}) {
        if (absl::Status st = ReadCurve(e, key, absl::StrCat("stall_starts[].", key), out);
            !st.ok()) {
          return st;
        }
      }
      a.stall_starts.push_back(std::move(s));
    }
  }
  return a;
}

}  // namespace flashtick
