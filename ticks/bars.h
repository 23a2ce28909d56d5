// Bar CSV reader (timestamp, OHLCV). Columns by header name (case-insensitive):
//   timestamp | time | datetime | date   (else the first column)   required
//   close | price | last                                            required
//   open, high, low                                                 optional (= close)
//   volume | vol                                                    optional (0)
// A bar's timestamp is when its close is known (end-stamped), so a bar enters the
// session grid at the step containing its timestamp; shift start-stamped files.
// Rows come back in file order, uncleaned: CleanBars (cleaning.h) validates them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

struct Bar {
  int64_t time_us = 0;
  int64_t line = 0;
  double open = 0, high = 0, low = 0, close = 0, volume = 0;
};

absl::StatusOr<std::vector<Bar>> ParseBarsCsv(absl::string_view text,
                                              absl::string_view source_name = "bars csv");
absl::StatusOr<std::vector<Bar>> ReadBarsCsvFile(const std::string& path);

}  // namespace flashtick
