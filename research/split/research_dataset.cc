// ResearchDataset (see research_dataset.h).
#include "research/split/research_dataset.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

absl::StatusOr<ResearchDataset> ResearchDataset::Build(const std::vector<SessionGrid>& days,
                                                       int64_t horizon, double fixed_alpha) {
  if (days.empty()) return absl::InvalidArgumentError("dataset: no sessions");
  if (!(fixed_alpha >= 0)) return absl::InvalidArgumentError("dataset: fixed α must be ≥ 0");
  ResearchDataset ds;
  ds.horizon_ = horizon;
  ds.fixed_alpha_ = fixed_alpha;
  ASSIGN_OR_RETURN(ds.ctx_, DayContext::Build(days));
  for (int d = 0; d < ds.ctx_.num_days(); ++d) {
    ASSIGN_OR_RETURN(std::vector<double> l, LabelReturns(ds.mids(d), horizon));
    ds.l_.push_back(std::move(l));
  }
  return ds;
}

std::vector<int64_t> ResearchDataset::day_steps() const {
  std::vector<int64_t> s;
  for (int d = 0; d < ctx_.num_days(); ++d) s.push_back(ctx_.day_steps(d));
  return s;
}

std::vector<double> ResearchDataset::mids(int day) const {
  const auto begin = ctx_.mids().begin() + ctx_.day_offset(day);
  return std::vector<double>(begin, begin + ctx_.day_steps(day));
}

absl::StatusOr<FoldLabels> ResearchDataset::LabelFold(const Fold& fold) const {
  std::vector<double> train_l;
  for (const SampleRange& r : fold.train) {
    if (r.day < 0 || r.day >= num_days() || r.begin < 0 || r.end > ctx_.day_steps(r.day)) {
      return absl::OutOfRangeError(absl::StrCat("dataset: fold sample range on day ", r.day,
                                                " outside the dataset; same day_steps()?"));
    }
    train_l.insert(train_l.end(), l_[r.day].begin() + r.begin, l_[r.day].begin() + r.end);
  }
  FoldLabels out;
  if (fixed_alpha_ > 0) {
    out.alpha = fixed_alpha_;
  } else {
    ASSIGN_OR_RETURN(out.alpha, ChooseBalancedAlpha(train_l));
  }
  out.classes.resize(num_days());
  auto fill = [&](const std::vector<SampleRange>& ranges,
                  std::array<int64_t, kNumClasses>* counts) -> absl::Status {
    for (const SampleRange& r : ranges) {
      if (r.day < 0 || r.day >= num_days() || r.end > ctx_.day_steps(r.day)) {
        return absl::OutOfRangeError(absl::StrCat("dataset: test range on day ", r.day));
      }
      std::vector<int8_t>& c = out.classes[r.day];
      if (c.empty()) c.assign(ctx_.day_steps(r.day), kNoLabel);
      for (int64_t t = r.begin; t < r.end; ++t) {
        const double l = l_[r.day][t];
        if (std::isnan(l)) continue;
        c[t] = l > out.alpha ? kUp : l < -out.alpha ? kDown : kFlat;
        ++(*counts)[c[t]];
      }
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(fill(fold.train, &out.train_counts));
  RETURN_IF_ERROR(fill(fold.test, &out.test_counts));
  return out;
}

absl::StatusOr<TestDayScore> ResearchDataset::ScoreTestDay(int day,
                                                           const std::vector<int8_t>& labels,
                                                           const std::vector<double>& probs,
                                                           double cost_bps) const {
  if (day < 0 || day >= num_days()) {
    return absl::OutOfRangeError(absl::StrCat("dataset: day ", day));
  }
  const int64_t steps = ctx_.day_steps(day);
  if (static_cast<int64_t>(labels.size()) != steps ||
      static_cast<int64_t>(probs.size()) != steps * kNumClasses) {
    return absl::InvalidArgumentError(
        absl::StrCat("dataset: day ", day, " has ", steps, " steps; got ", labels.size(),
                     " labels and ", probs.size(), " probabilities (want steps × 3)"));
  }
  TestDayScore s;
  s.day = day;
  s.date = ctx_.date(day);
  ASSIGN_OR_RETURN(s.metrics, Classify(labels, probs));
  std::vector<int8_t> predicted(steps, kNoLabel);
  for (int64_t t = 0; t < steps; ++t) {
    if (labels[t] != kNoLabel) predicted[t] = PredictClass(&probs[t * kNumClasses]);
  }
  ASSIGN_OR_RETURN(s.pnl, DailyStrategyReturn(mids(day), predicted, horizon_, cost_bps));
  return s;
}

}  // namespace flashtick
