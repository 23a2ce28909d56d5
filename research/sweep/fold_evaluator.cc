// EvaluateFold (see fold_evaluator.h).
#include "research/sweep/fold_evaluator.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/transformer.h"
#include "research/sweep/day_predictor.h"

namespace flashtick {

absl::Status EvaluateFold(const ResearchDataset& dataset, const SweepData& data,
                          const ArmPlan& plan, int fold_index, const FoldLabels& labels,
                          const std::vector<float>& features, const std::string& model_dir,
                          Backend* backend, double cost_bps, ArmResult* result) {
  ASSIGN_OR_RETURN(std::unique_ptr<Transformer> model, Transformer::Load(model_dir, backend));
  result->kernel_path = model->kernel_path();
  result->parameters = model->parameter_count();
  if (result->events.size() != data.lags.size()) {
    result->events.clear();
    for (int64_t lag : data.lags) result->events.push_back({lag, 0, 0});
  }
  const DayContext& ctx = dataset.context();
  for (int day : plan.folds[fold_index].fold.test_days) {
    const std::vector<int8_t>& y = labels.classes[day];
    if (y.empty()) {
      return absl::InternalError(absl::StrCat("fold ", fold_index, " has no labels on test day ",
                                              day));
    }
    const int64_t offset = ctx.day_offset(day);
    ASSIGN_OR_RETURN(std::vector<double> probs,
                     PredictDay(model.get(), features, offset, y, plan.context, plan.eval_stride,
                                plan.batch));
    ASSIGN_OR_RETURN(TestDayScore score, dataset.ScoreTestDay(day, y, probs, cost_bps));
    DayResult d;
    d.day = day;
    d.date = score.date;
    d.fold = fold_index;
    d.metrics = score.metrics;
    d.daily_return = score.pnl.daily_return;
    d.gross = score.pnl.gross;
    d.trades = score.pnl.trades;
    result->days.push_back(std::move(d));
    for (const PlantedEvent& e : data.events) {
      const int64_t t = e.call_step - offset;
      if (t < 0 || t >= ctx.day_steps(day) || y[t] < 0) continue;
      EventTally& tally = result->events[e.lag_family];
      ++tally.events;
      const int predicted = PredictClass(&probs[t * kNumClasses]);
      tally.hits += predicted == y[t];
      if (predicted != kFlat) {
        ++tally.calls;
        tally.call_hits += predicted == y[t];
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace flashtick
