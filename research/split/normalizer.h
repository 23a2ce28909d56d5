// Feature normalisation fitted on past (training) days only, so a test day's
// statistics never leak into its own inputs (docs/research/protocol.md,
// "Walk-forward": fitted on the fold's training days before its first test
// day). z = (x − mean) / std per feature, for the
// continuous, heavy-tailed columns (log return, spread, signed volume); the
// bounded time-of-day and session-start columns pass through unchanged.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "research/data/day_context.h"
#include "ticks/features.h"
#include "research/split/walk_forward.h"

namespace flashtick {

class FeatureNormalizer {
 public:
  // Statistics over every step of `days` (must be non-empty and in range).
  static absl::StatusOr<FeatureNormalizer> Fit(const DayContext& ctx, const std::vector<int>& days);
  // Statistics over the fold's training days that precede its first test day
  // (in k-fold mode later training days are excluded: past days only).
  static absl::StatusOr<FeatureNormalizer> FitPast(const DayContext& ctx, const Fold& fold);

  // Normalises rows [n, kNumFeatures] in place.
  void Apply(float* rows, int64_t n) const;

  const std::array<double, kNumFeatures>& mean() const { return mean_; }
  const std::array<double, kNumFeatures>& stddev() const { return std_; }
  const std::vector<int>& fitted_days() const { return days_; }

  static constexpr std::array<bool, kNumFeatures> kNormalised = {true,  true,  true,
                                                                 false, false, false};

 private:
  std::array<double, kNumFeatures> mean_{}, std_{};
  std::vector<int> days_;
};

}  // namespace flashtick
