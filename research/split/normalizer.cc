// FeatureNormalizer (see normalizer.h). Two-pass mean and variance in double;
// a zero variance (a constant feature on the training days) gives std 1 so the
// column is centred but not blown up.
#include "research/split/normalizer.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick {

absl::StatusOr<FeatureNormalizer> FeatureNormalizer::Fit(const DayContext& ctx,
                                                         const std::vector<int>& days) {
  if (days.empty()) return absl::InvalidArgumentError("normalizer: no training days to fit on");
  FeatureNormalizer z;
  z.days_ = days;
  const std::vector<float>& x = ctx.features();
  int64_t n = 0;
  for (int d : days) {
    if (d < 0 || d >= ctx.num_days()) {
      return absl::OutOfRangeError(
          absl::StrCat("normalizer: day ", d, " outside ", ctx.num_days()));
    }
    for (int64_t t = 0; t < ctx.day_steps(d); ++t) {
      const float* row = &x[(ctx.day_offset(d) + t) * kNumFeatures];
      for (int j = 0; j < kNumFeatures; ++j) z.mean_[j] += row[j];
      ++n;
    }
  }
  for (double& m : z.mean_) m /= static_cast<double>(n);
  for (int d : days) {
    for (int64_t t = 0; t < ctx.day_steps(d); ++t) {
      const float* row = &x[(ctx.day_offset(d) + t) * kNumFeatures];
      for (int j = 0; j < kNumFeatures; ++j)
        z.std_[j] += (row[j] - z.mean_[j]) * (row[j] - z.mean_[j]);
    }
  }
  for (int j = 0; j < kNumFeatures; ++j) {
    z.std_[j] = n > 1 ? std::sqrt(z.std_[j] / static_cast<double>(n - 1)) : 0.0;
    if (!(z.std_[j] > 0)) z.std_[j] = 1.0;
    if (!kNormalised[j]) {
      z.mean_[j] = 0.0;
      z.std_[j] = 1.0;
    }
  }
  return z;
}

absl::StatusOr<FeatureNormalizer> FeatureNormalizer::FitPast(const DayContext& ctx,
                                                             const Fold& fold) {
  if (fold.test_days.empty())
    return absl::InvalidArgumentError("normalizer: fold has no test days");
  std::vector<int> past;
  for (int d : fold.train_days) {
    if (d < fold.test_days.front()) past.push_back(d);
  }
  if (past.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("normalizer: no training day precedes test day ", fold.test_days.front(),
                     "; past-only statistics need at least one earlier day"));
  }
  return Fit(ctx, past);
}

void FeatureNormalizer::Apply(float* rows, int64_t n) const {
  for (int64_t i = 0; i < n; ++i) {
    float* row = rows + i * kNumFeatures;
    for (int j = 0; j < kNumFeatures; ++j) {
      if (kNormalised[j]) row[j] = static_cast<float>((row[j] - mean_[j]) / std_[j]);
    }
  }
}

}  // namespace flashtick
