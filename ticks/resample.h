// Resampling cleaned quotes (or bars) onto the session grid: step t of a session
// covers [open + t·step, open + (t+1)·step) and holds the last quote known at the
// end of the step (carried forward, also across the night), and the signed volume
// of the trades inside the step. Defaults: 09:30–16:00, 1 s steps = 23,400 steps.
// Trade sign: Lee–Ready — above the mid of the quote in force is a buy (+), below
// a sell (−), at the mid the tick rule (sign of the last price change).
// Bars: bid = ask = close; flow = sign(close − open)·volume at the bar's step.
// Before the very first quote of the data there is nothing to carry: those steps
// of the first session take its first quote and are counted as backfilled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ticks/bars.h"
#include "ticks/quotes.h"
#include "ticks/features.h"

namespace flashtick {

struct SessionSpec {
  int64_t open_second = 9 * 3600 + 30 * 60;  // seconds after midnight (local clock)
  int64_t step_us = 1000000;                 // grid step
  int64_t steps = kSessionSeconds;           // steps per session
  // Added to every timestamp first, e.g. +7 h to read UTC stamps on Bangkok time.
  int64_t clock_shift_seconds = 0;
  bool weekdays_only = true;  // drop Saturday and Sunday sessions
  // A session is kept when at least this many rows fall inside its window.
  int64_t min_rows_in_session = 1;

  absl::Status Validate() const;
};

struct SessionStats {
  std::string date;
  int64_t rows_in_session = 0;  // quote or bar rows inside the window
  int64_t trades = 0;
  int64_t unsigned_trades = 0;   // at the mid with no prior price change to sign by
  int64_t backfilled_steps = 0;  // steps before the first quote of the data
};

struct Sessions {
  std::vector<SessionGrid> days;    // in date order
  std::vector<SessionStats> stats;  // one per day
  int64_t days_skipped = 0;         // dates with rows but too few inside the window
};

// `ticks` must be cleaned (time non-decreasing); FailedPrecondition otherwise.
absl::StatusOr<Sessions> ResampleQuotes(const std::vector<Tick>& ticks, const SessionSpec& spec,
                                        const std::string& instrument);
absl::StatusOr<Sessions> ResampleBars(const std::vector<Bar>& bars, const SessionSpec& spec,
                                      const std::string& instrument);

}  // namespace flashtick
