// Quote/trade CSV reader. Columns are found by header name (case-insensitive):
//   timestamp | time | datetime | date   (else the first column)   required
//   bid, ask                                                        required
//   bid_size | bidsize, ask_size | asksize                          optional (0)
//   trade_price | price | last, trade_size | size | volume          optional
//   source | contributor | venue                                    optional
// A row with a trade price carries a trade of trade_size at that price; the quote
// columns then hold the quote in force. Other columns are ignored. Rows come back
// in file order, uncleaned: CleanQuotes (cleaning.h) drops bad rows and counts them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

struct Tick {
  int64_t time_us = 0;  // ticks/timestamp.h
  int64_t line = 0;     // source line, for reports
  double bid = 0, ask = 0;
  double bid_size = 0, ask_size = 0;
  bool has_trade = false;
  double trade_price = 0, trade_size = 0;
  std::string source;  // contributor / venue; part of a row's identity for duplicates
};

// Parses CSV text; errors name `source_name` and the line.
absl::StatusOr<std::vector<Tick>> ParseQuotesCsv(absl::string_view text,
                                                 absl::string_view source_name = "quotes csv");
absl::StatusOr<std::vector<Tick>> ReadQuotesCsvFile(const std::string& path);

}  // namespace flashtick
