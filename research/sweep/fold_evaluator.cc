// EvaluateFold (see fold_evaluator.h).
#include "research/sweep/fold_evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/transformer.h"
#include "research/sweep/attention_rollout.h"
#include "research/sweep/day_predictor.h"

namespace flashtick {
namespace {

// The rows of some query steps in one layer, head by head, read off the event's probe
// (Transformer::ProbeAttention: exact from the forward's q, k and log-sum-exp). Each
// row is a softmax (with the zero sink's weight, in a layer that excludes the step
// itself): a sum far from 1 means the probe read the forward's statistics wrongly (say a
// kernel's log-sum-exp in another base), not a finding.
absl::StatusOr<std::vector<float>> CheckedWeights(const AttentionProbe& probe, int layer,
                                                  absl::Span<const int64_t> steps) {
  ASSIGN_OR_RETURN(std::vector<float> w, probe.Weights(layer, steps));
  ASSIGN_OR_RETURN(const std::vector<float> sink, probe.SinkWeights(layer, steps));
  const int64_t H = probe.heads(), T = probe.steps();
  for (size_t r = 0; r < steps.size(); ++r) {
    for (int64_t h = 0; h < H; ++h) {
      const float* row = w.data() + (r * H + h) * T;
      double sum = sink[r * static_cast<size_t>(H) + static_cast<size_t>(h)];
      for (int64_t j = 0; j < T; ++j) sum += row[j];
      if (std::abs(sum - 1.0) > 1e-2) {
        return absl::InternalError(absl::StrCat("attention weights of layer ", layer, " head ", h,
                                                " at step ", steps[r], " sum to ", sum, ", not 1"));
      }
    }
  }
  return w;
}

// Adds one event to the family's attention means (arm_result.h, EventTally): the
// window of the arm's context that ends at the call step, as the test-day
// prediction sees it; the call step's own attention on the cue and on itself per
// layer and head, and its attention rollout onto the cue (attention_rollout.h), which
// also credits a cue reached through an intermediate step.
absl::Status TallyAttention(Transformer* model, const std::vector<float>& features, int64_t context,
                            const PlantedEvent& e, EventTally* tally) {
  const int64_t start = std::max<int64_t>(0, e.call_step - context + 1);
  const int64_t T = e.call_step - start + 1, F = model->config().features;
  const int64_t cue = e.cue_step - start;
  if (cue < 0 || cue >= T || (start + T) * F > static_cast<int64_t>(features.size()))
    return absl::OkStatus();  // the cue is outside the window: nothing to look at
  const absl::Span<const float> window(features.data() + start * F, T * F);
  const int64_t H = model->config().heads;
  // One forward per event: the call step's rows in every layer and the rollout's rows
  // of the steps below it are all read off the same probe.
  ASSIGN_OR_RETURN(AttentionProbe probe, model->ProbeAttention(window, T));
  const int64_t call[] = {T - 1};
  std::vector<std::vector<float>> w(static_cast<size_t>(probe.layers()));
  for (int l = 0; l < probe.layers(); ++l) {
    ASSIGN_OR_RETURN(w[static_cast<size_t>(l)], CheckedWeights(probe, l, call));
  }
  const AttentionRowsFn head_mean_rows =
      [&](int layer, const std::vector<int64_t>& steps)
      -> absl::StatusOr<std::vector<std::vector<double>>> {
    // The top layer starts from the call step alone, whose rows `w` already holds.
    std::vector<float> fresh;
    const std::vector<float>* a = &w[static_cast<size_t>(layer)];
    if (steps.size() != 1 || steps[0] != T - 1) {
      ASSIGN_OR_RETURN(fresh, CheckedWeights(probe, layer, steps));
      a = &fresh;
    }
    std::vector<std::vector<double>> rows(steps.size(), std::vector<double>(T, 0.0));
    for (size_t r = 0; r < steps.size(); ++r) {
      for (int64_t h = 0; h < H; ++h) {
        const float* row = a->data() + (r * H + h) * T;
        for (int64_t j = 0; j <= steps[r]; ++j) rows[r][j] += row[j] / static_cast<double>(H);
      }
    }
    return rows;
  };
  ASSIGN_OR_RETURN(auto rollout, AttentionRollout(probe.layers(), T, T - 1, head_mean_rows));
  double on_cue = 0;
  for (const auto& [step, flow] : rollout) on_cue += step == cue ? flow : 0.0;

  const size_t n = w.size() * static_cast<size_t>(H);
  if (tally->cue_weight.size() != n) {
    tally->cue_weight.assign(n, 0.0);
    tally->self_weight.assign(n, 0.0);
  }
  const double k = static_cast<double>(tally->attention_events);  // running means
  for (size_t l = 0; l < w.size(); ++l) {
    for (int64_t h = 0; h < H; ++h) {
      const size_t i = l * H + h;
      tally->cue_weight[i] = (tally->cue_weight[i] * k + w[l][h * T + cue]) / (k + 1);
      tally->self_weight[i] = (tally->self_weight[i] * k + w[l][h * T + T - 1]) / (k + 1);
    }
  }
  tally->cue_rollout = (tally->cue_rollout * k + on_cue) / (k + 1);
  ++tally->attention_events;
  return absl::OkStatus();
}

}  // namespace

absl::Status EvaluateFold(const ResearchDataset& dataset, const SweepData& data,
                          const ArmPlan& plan, int fold_index, const FoldLabels& labels,
                          const std::vector<float>& features, const std::string& model_dir,
                          Backend* backend, double cost_bps, ArmResult* result) {
  ASSIGN_OR_RETURN(std::unique_ptr<Transformer> model, Transformer::Load(model_dir, backend));
  result->kernel_path = model->kernel_path();
  result->parameters = model->parameter_count();
  if (result->events.size() != data.lags.size()) {
    result->events.clear();
    for (int64_t lag : data.lags) {
      EventTally t;
      t.lag = lag;
      result->events.push_back(t);
    }
  }
  const DayContext& ctx = dataset.context();
  bool attention_ok = true;
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
      if (tally.attention_events < kAttentionEvents && attention_ok) {
        // A diagnostic: its failure (say a backend without the probe's ops) leaves the
        // tally empty and is logged, but does not fail the fold's scores.
        const absl::Status s = TallyAttention(model.get(), features, plan.context, e, &tally);
        if (!s.ok()) {
          std::fprintf(stderr, "[%s] attention diagnostic skipped: %s\n", result->arm_id.c_str(),
                       std::string(s.message()).c_str());
          attention_ok = false;
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace flashtick
