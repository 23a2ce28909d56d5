// Cleaning of parsed quotes and bars, with a count of every row dropped and why.
// Each dropped row is counted once, under the first rule it breaks, checked in
// this order:
//   quotes: out_of_order (earlier than the last kept row) → crossed (bid > ask) →
//           locked (bid = ask) → non_positive (bid ≤ 0, negative sizes, trade
//           price ≤ 0) → duplicate (same content as a kept row at the same time)
//   bars:   out_of_order → duplicate (a second bar at a kept bar's time) →
//           invalid (a price ≤ 0, low > high, open or close outside [low, high],
//           volume < 0)
// Out-of-order rows are dropped, not re-sorted: a feed that goes back in time has
// a stale or mis-stamped row, and re-sorting would invent an order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ticks/bars.h"
#include "ticks/quotes.h"

namespace flashtick {

struct CleaningReport {
  int64_t input_rows = 0;
  int64_t kept = 0;
  int64_t out_of_order = 0;
  int64_t crossed = 0;
  int64_t locked = 0;
  int64_t non_positive = 0;  // quotes
  int64_t invalid = 0;       // bars
  int64_t duplicates = 0;
  std::vector<int64_t> first_dropped_lines;  // up to kMaxLinesKept, for the report

  static constexpr int kMaxLinesKept = 20;
  int64_t dropped() const { return input_rows - kept; }
  std::string ToString() const;
};

struct CleanQuotes {
  std::vector<Tick> ticks;
  CleaningReport report;
};
struct CleanBarSeries {
  std::vector<Bar> bars;
  CleaningReport report;
};

CleanQuotes CleanTicks(const std::vector<Tick>& rows);
CleanBarSeries CleanBars(const std::vector<Bar>& rows);

}  // namespace flashtick
