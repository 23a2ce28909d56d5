// Tick CSV input for `flashtick predict`. Two layouts, told apart by the header:
//   raw ticks:  timestamp,bid,ask,flow
//     timestamp = seconds since the 09:30 open (a number) or a wall-clock time
//     HH:MM:SS[.fff]. Rows are resampled onto the 1-second session grid: the
//     last quote in each second, the flow summed; quiet seconds carry the quote
//     forward with flow 0; seconds before the first quote take the first quote
//     (no price move, no flow). Then ComputeFeatures (ticks/features.h).
//     Rows must not go back in time (within a second either); a crossed quote
//     (bid > ask) is dropped and counted, as the research cleaning drops it.
//   features:   log_return,spread_bps,signed_volume,tod_sin,tod_cos,session_start
//     one row per step, used as is.
//   quotes:     the research layout, e.g. timestamp,bid,ask,bid_size,ask_size with
//     dated timestamps: read, cleaned and resampled by ticks/ (ParseQuotesCsv,
//     CleanTicks, ResampleQuotes), which must give exactly one session.
// Splitting (quotes, CRLF, comments, delimiters) is ticks/'s CsvTable for all
// three, so the CLI and the research code read a file by the same rules.
// Errors name the file, line and column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

struct TickTable {
  std::vector<float> features;  // [steps, kNumFeatures] row-major
  int64_t steps = 0;
  bool from_raw_ticks = false;
  int64_t backfilled_steps = 0;  // raw ticks: steps before the first quote
  int64_t dropped_rows = 0;      // crossed quotes, or the cleaning's drops
};

// Pure (no I/O), for the fuzz target: `source` names the input in messages.
absl::StatusOr<TickTable> ParseTickCsv(absl::string_view text, const std::string& source);

absl::StatusOr<TickTable> ReadTickCsv(const std::string& path);

// Writes [steps, kNumFeatures] features with the feature header (the second
// layout above), so a day can be replayed with `predict --csv`.
absl::Status WriteFeatureCsv(const std::string& path, const std::vector<float>& features,
                             int64_t steps);

// The feature header, in ticks/features.h order.
const std::vector<std::string>& FeatureColumnNames();

}  // namespace flashtick
