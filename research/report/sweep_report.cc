// report.json (see sweep_report.h). Non-finite numbers (the Sharpe ratio of a
// constant series is ±inf) are written as null, which JSON can hold.
#include "research/report/sweep_report.h"

#include <cmath>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/file_io.h"
#include "research/report/markdown_report.h"
#include "research/report/plot_runner.h"
#include "research/stats/moments.h"

namespace flashtick {
namespace {

using nlohmann::json;

json Num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// A mean step time in milliseconds; null when there were no such steps.
json MeanMs(int64_t steps, double mean_seconds) {
  return steps > 0 ? Num(1e3 * mean_seconds) : json(nullptr);
}

json ArmJson(const ArmResult& a) {
  json days = json::array();
  double total = 0;
  int64_t trades = 0;
  for (const DayResult& d : a.days) {
    days.push_back({{"date", d.date},
                    {"fold", d.fold},
                    {"samples", d.metrics.samples},
                    {"accuracy", d.metrics.accuracy},
                    {"macro_f1", d.metrics.macro_f1},
                    {"log_loss", d.metrics.log_loss},
                    {"daily_return", d.daily_return},
                    {"gross", d.gross},
                    {"trades", d.trades}});
    total += d.daily_return;
    trades += d.trades;
  }
  json benefit = nullptr;
  auto pooled = a.Pooled();
  if (pooled.ok()) {
    const Moments m = ComputeMoments(a.daily_returns());
    benefit = MetricsToJson(*pooled);
    benefit["sharpe"] = Num(m.sharpe);
    benefit["mean_daily_return"] = Num(m.mean);
    benefit["stddev_daily_return"] = Num(m.stddev);
    benefit["total_return"] = total;
    benefit["trades"] = trades;
    benefit["test_days"] = a.days.size();
  }
  json events = json::array();
  for (const EventTally& e : a.events) {
    events.push_back({{"lag", e.lag},
                      {"events", e.events},
                      {"hits", e.hits},
                      {"rate", e.rate()},
                      {"calls", e.calls},
                      {"call_hits", e.call_hits},
                      {"attention_events", e.attention_events},
                      {"cue_weight", e.cue_weight},
                      {"self_weight", e.self_weight},
                      {"cue_rollout", Num(e.cue_rollout)}});
  }
  json curve = json::array();
  for (const LossPoint& p : a.loss_curve) curve.push_back({p.step, Num(p.loss)});
  // Every validation check (the call-step loss with validate_on "calls"): where a
  // planted family is learned shows as a drop here, not in the training loss.
  json validation = json::array();
  for (const LossPoint& p : a.validation_curve) validation.push_back({p.step, Num(p.loss)});
  // training.stall_restarts: the first fold's starts that were not kept, with their curves
  // (the arm's own curves above are the kept start's).
  json starts = json::array();
  for (const FirstFoldStart& s : a.stall_starts) {
    json loss = json::array(), checks = json::array();
    for (const LossPoint& p : s.loss_curve) loss.push_back({p.step, Num(p.loss)});
    for (const LossPoint& p : s.validation_curve) checks.push_back({p.step, Num(p.loss)});
    starts.push_back({{"start", s.index},
                      {"seed", s.seed},
                      {"steps", s.steps},
                      {"ended", s.ended},
                      {"best_validation_loss", s.validation_curve.empty()
                                                   ? json(nullptr)
                                                   : Num(s.best_validation_loss)},
                      {"best_validation_step", s.best_validation_step},
                      {"loss_curve", loss},
                      {"validation_curve", checks}});
  }
  return {{"arm_id", a.arm_id},
          {"context", a.context},
          {"seed", a.seed},
          {"state", ArmStateName(a.state)},
          {"folds", a.folds},
          {"evaluated_folds", a.evaluated_folds},
          {"steps", a.step},
          {"total_steps", a.total_steps},
          {"batch", a.batch},
          {"kernel_path", a.kernel_path},
          {"backend", a.backend},
          {"ran_on", a.ran_on},
          {"cost",
           {{"train_seconds", a.train_seconds},
            {"eval_seconds", a.eval_seconds},
            {"epochs", a.epochs()},
            {"seconds_per_epoch", a.seconds_per_epoch()},
            {"tokens", a.tokens},
            {"tokens_per_second", a.tokens_per_second()},
            {"peak_memory_bytes", a.peak_memory_bytes},
            {"parameters", a.parameters},
            // Plain steps and Sophia-H's Hessian-refresh (HVP) steps; a mean is null
            // when the arm had no step of that kind (AdamW: no refresh steps).
            {"plain_steps", a.plain_steps},
            {"plain_step_seconds", a.plain_step_seconds},
            {"mean_plain_step_ms", MeanMs(a.plain_steps, a.mean_plain_step_seconds())},
            {"refresh_steps", a.refresh_steps},
            {"refresh_step_seconds", a.refresh_step_seconds},
            {"mean_refresh_step_ms", MeanMs(a.refresh_steps, a.mean_refresh_step_seconds())}}},
          {"benefit", benefit},
          {"days", days},
          {"events", events},
          {"loss_curve", curve},
          {"validation_curve", validation},
          {"stop_reason", a.stop_reason},
          {"restart_choice", a.restart_choice},
          {"stall_starts", starts},
          {"skipped_steps", a.skipped_steps},
          {"best_validation_loss", a.validation_curve.empty() ? json(nullptr)
                                                               : json(a.best_validation_loss)},
          {"best_validation_step", a.best_validation_step}};
}

json VerdictJson(const SweepOutcome& o) {
  if (!o.verdict.has_value()) return nullptr;
  const GateVerdict& v = *o.verdict;
  const auto& ns = o.config.contexts;
  json sharpe = json::array();
  for (double s : v.arm_sharpe) sharpe.push_back(Num(s));
  json score = json::array();
  for (double s : v.arm_score) score.push_back(Num(s));
  json seed_dsr = json::array();
  for (const DeflatedSharpe& d : v.seed_dsr) {
    seed_dsr.push_back({{"dsr", Num(d.dsr)}, {"sharpe", Num(d.sharpe)}, {"sr0", Num(d.sr0)}});
  }
  return {{"passed", v.passed},
          {"summary", v.Summary()},
          {"reasons", v.reasons},
          {"contexts", ns},
          {"longest_context", ns[v.longest_arm]},
          {"best_context", v.best_arm >= 0 ? json(ns[v.best_arm]) : json(nullptr)},
          {"best_by", BestByName(o.config.gates.best_by)},
          {"arm_sharpe", sharpe},
          {"arm_score", score},
          {"best_ok", v.best_ok},
          {"dsr_ok", v.dsr_ok},
          {"pbo_ok", v.pbo_ok},
          {"min_dsr", o.config.gates.min_dsr},
          {"max_pbo", o.config.gates.max_pbo},
          {"dsr",
           {{"dsr", Num(v.dsr.dsr)},
            {"sharpe", Num(v.dsr.sharpe)},
            {"sr0", Num(v.dsr.sr0)},
            {"emax", Num(v.dsr.emax)},
            {"trials_var", Num(v.dsr.trials_var)},
            {"trials", v.dsr.trials}}},
          {"seed_dsr", seed_dsr},
          {"pbo",
           {{"pbo", Num(v.pbo.pbo)},
            {"combinations", v.pbo.combinations},
            {"median_ties", v.pbo.median_ties},
            {"blocks", v.pbo.blocks},
            {"selected", v.pbo.selected},
            {"tie_rule",
             "lambda = 0 (in-sample best at the out-of-sample median) counts as overfit; "
             "in-sample ties go to the shorter N; out-of-sample ties take the average rank"}}}};
}

}  // namespace

json SweepReportJson(const SweepOutcome& o) {
  json arms = json::array();
  for (const ArmResult& a : o.arms) arms.push_back(ArmJson(a));
  return {{"format", kSweepReportFormat},
          {"version", kSweepReportVersion},
          {"name", o.config.name},
          {"status", o.cancelled ? "cancelled" : "complete"},
          {"config", json::parse(SweepConfigToJson(o.config))},
          {"data",
           {{"description", o.data_description},
            {"days", o.days},
            {"steps_per_day", o.steps_per_day},
            {"test_days", o.test_dates.size()},
            {"test_dates", o.test_dates},
            {"cleaning", o.cleaning}}},
          {"backend", o.backend},
          {"device", o.device},
          {"arms", arms},
          {"verdict", VerdictJson(o)},
          {"verdict_error", o.verdict_error},
          {"precision_check",
           o.chosen_arm >= 0 ? PrecisionToJson(o.precision) : json(nullptr)},
          {"wall_seconds", o.wall_seconds},
          {"call_seconds", o.call_seconds},
          {"calls", o.calls},
          {"method",
           {{"epoch", "as many labelled tokens as the arm's final training set"},
            {"eval", "test days scored with windows of N advancing by eval_stride; each scored "
                     "step sees between N - eval_stride + 1 and N steps of context"},
            {"strategy", "+1/0/-1 on up/flat/down held k steps, net of cost_bps per trade"},
            {"warm_start", "each fold continues the previous fold's model"}}}};
}

absl::Status WriteSweepReport(const std::string& dir, const std::string& python,
                              const std::string& plot_script, SweepOutcome* o) {
  json report = SweepReportJson(*o);
  const std::string json_path = dir + "/report.json";
  RETURN_IF_ERROR(WriteFileAtomic(json_path, report.dump(1)));
  PlotResult plots = RunPlotScript(python, plot_script, json_path, dir);
  o->plots_note = plots.note;
  report["plots"] = plots.files;
  report["plots_note"] = plots.note;
  RETURN_IF_ERROR(WriteFileAtomic(json_path, report.dump(1)));
  RETURN_IF_ERROR(WriteFileAtomic(dir + "/report.md", MarkdownReport(report)));
  o->report_files = {"report.json", "report.md"};
  for (const std::string& f : plots.files) o->report_files.push_back(f);
  return absl::OkStatus();
}

}  // namespace flashtick
