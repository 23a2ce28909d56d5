// Turns per-step synthetic series (log-return in basis points, signed flow,
// spread in basis points) into consecutive weekday SessionGrids, the shape the
// real-data path produces. Shared by every research generator so they differ
// only in the series they draw. The series run continuously across the night
// (no overnight return), which keeps lags measured on the concatenated grid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ticks/features.h"

namespace flashtick {

struct DaySeries {
  std::vector<double> return_bps;  // per step; return_bps[0] is ignored (the start)
  std::vector<double> flow;        // signed volume per step
  std::vector<double> spread_bps;  // quoted spread per step (> 0)
};

// Splits the series into days of `steps_per_day` (the total must be a multiple)
// with dates on consecutive weekdays from `first_date` (YYYY-MM-DD, a weekday).
absl::StatusOr<std::vector<SessionGrid>> BuildDays(const DaySeries& s, int64_t steps_per_day,
                                                   const std::string& instrument,
                                                   const std::string& first_date,
                                                   double start_mid = 100.0);

// The date `n` weekdays after `date` (n ≥ 0).
absl::StatusOr<std::string> AddWeekdays(const std::string& date, int64_t n);

}  // namespace flashtick
