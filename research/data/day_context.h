// DayContext: the features of consecutive sessions laid end to end, so a context
// window of N steps may reach back across previous sessions (N = 32,768 is longer
// than one 23,400-step session). Overnight gaps are marked by feature 5
// (session_start = 1 at step 0 of every session, ticks/features.h), and the log
// return at a session's first step is 0, so no overnight move leaks into a step.
// A window that runs past the first day is zero-padded on the left; the caller
// gets the count of real rows to build its mask.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ticks/features.h"

namespace flashtick {

class DayContext {
 public:
  // Days must be in strictly increasing date order and non-empty.
  static absl::StatusOr<DayContext> Build(const std::vector<SessionGrid>& days);

  int num_days() const { return static_cast<int>(offsets_.size()); }
  int64_t total_steps() const { return static_cast<int64_t>(mids_.size()); }
  int64_t day_offset(int day) const { return offsets_[day]; }
  int64_t day_steps(int day) const { return steps_[day]; }
  const std::string& date(int day) const { return dates_[day]; }
  // [total_steps, kNumFeatures] row-major, and the mid per step.
  const std::vector<float>& features() const { return features_; }
  const std::vector<double>& mids() const { return mids_; }

  // Copies the n feature rows ending at step t of `day` (inclusive) into
  // out[n · kNumFeatures]: row n−1 is step t. Rows before the first day are 0.
  // Returns the number of real (unpadded) rows.
  absl::StatusOr<int64_t> Window(int day, int64_t t, int64_t n, float* out) const;

 private:
  std::vector<std::string> dates_;
  std::vector<int64_t> offsets_, steps_;
  std::vector<float> features_;
  std::vector<double> mids_;
};

}  // namespace flashtick
