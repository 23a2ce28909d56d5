// Tick CSV reader and feature CSV writer (see tick_csv.h).
#include "client/tick_csv.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "ticks/cleaning.h"
#include "ticks/csv_table.h"
#include "ticks/data_file.h"
#include "ticks/quotes.h"
#include "ticks/resample.h"
#include "ticks/features.h"

namespace flashtick {
namespace {

constexpr double kOpenSecondsOfDay = 9 * 3600 + 30 * 60;  // 09:30:00
// Prices above this are refused: the mid and log returns of prices near the
// double range overflow (1e308 + 1e308 = inf).
constexpr double kMaxPrice = 1e9;

// Seconds since the open from "1234.5" or "HH:MM:SS[.fff]"; finite or false (a
// NaN would reach the float-to-integer step index below, which is undefined).
bool ParseSessionSeconds(const std::string& text, double* seconds) {
  if (text.find(':') == std::string::npos) {
    return absl::SimpleAtod(text, seconds) && std::isfinite(*seconds);
  }
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  int hours = 0, minutes = 0;
  double secs = 0;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &hours) ||
      !absl::SimpleAtoi(parts[1], &minutes) || !absl::SimpleAtod(parts[2], &secs) ||
      !std::isfinite(secs) || hours < 0 || hours > 23 || minutes < 0 || minutes > 59) {
    return false;
  }
  *seconds = hours * 3600.0 + minutes * 60.0 + secs - kOpenSecondsOfDay;
  return true;
}

absl::Status LineError(const std::string& source, int64_t line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": ", what));
}

// timestamp,bid,ask,flow: seconds since the open, resampled onto the 1 s grid.
absl::StatusOr<TickTable> FromRawTicks(const CsvTable& table, const std::string& source) {
  SessionGrid grid;
  int64_t first_step = -1, crossed = 0;
  double last_seconds = -1;
  for (const CsvRow& row : table.rows()) {
    const std::vector<std::string>& cells = row.fields;
    double seconds = 0, bid = 0, ask = 0, flow = 0;
    if (!ParseSessionSeconds(cells[0], &seconds)) {
      return LineError(source, row.line,
                       "timestamp is neither seconds since the open nor HH:MM:SS");
    }
    if (!absl::SimpleAtod(cells[1], &bid) || !absl::SimpleAtod(cells[2], &ask) ||
        !absl::SimpleAtod(cells[3], &flow) || !std::isfinite(bid) || !std::isfinite(ask) ||
        !std::isfinite(flow) || bid <= 0 || ask <= 0 || bid > kMaxPrice || ask > kMaxPrice) {
      return LineError(source, row.line,
                       absl::StrCat("bid, ask and flow must be finite; prices in (0, ",
                                    kMaxPrice, "]"));
    }
    if (seconds < 0 || seconds >= kSessionSeconds) {
      return LineError(source, row.line,
                       absl::StrCat("timestamp is ", seconds,
                                    " s from the open, outside the 09:30-16:00 session"));
    }
    // Within a second too: "the last quote in the second" must mean the latest.
    if (seconds < last_seconds) {
      return LineError(source, row.line, "timestamps go backwards; sort the file by time");
    }
    last_seconds = seconds;
    // A crossed quote is a bad row, dropped as the research cleaning drops it
    // (ticks/cleaning.h), not sent as a negative spread.
    if (bid > ask) {
      ++crossed;
      continue;
    }
    const int64_t step = static_cast<int64_t>(std::floor(seconds));
    if (first_step < 0) first_step = step;
    // Fill the grid up to `step`: carry the last quote (or the first, before it).
    while (grid.steps() <= step) {
      grid.bid.push_back(grid.bid.empty() ? bid : grid.bid.back());
      grid.ask.push_back(grid.ask.empty() ? ask : grid.ask.back());
      grid.flow.push_back(0.0);
    }
    grid.bid[step] = bid;  // the last quote in the second wins
    grid.ask[step] = ask;
    grid.flow[step] += flow;
  }
  if (grid.steps() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no usable tick rows"));
  }
  TickTable out;
  out.features = ComputeFeatures(grid);
  out.steps = grid.steps();
  out.from_raw_ticks = true;
  out.backfilled_steps = first_step;
  out.dropped_rows = crossed;
  return out;
}

absl::StatusOr<TickTable> FromFeatures(const CsvTable& table, const std::string& source) {
  TickTable out;
  for (const CsvRow& row : table.rows()) {
    for (int f = 0; f < kNumFeatures; ++f) {
      float value = 0;
      if (!absl::SimpleAtof(row.fields[f], &value) || !std::isfinite(value)) {
        return LineError(source, row.line,
                         absl::StrCat("column ", FeatureColumnNames()[f],
                                      " is not a finite number"));
      }
      out.features.push_back(value);
    }
    ++out.steps;
  }
  if (out.steps == 0) return absl::InvalidArgumentError(absl::StrCat(source, ": no feature rows"));
  return out;
}

// The research layout (timestamp,bid,ask[,bid_size,ask_size,...], ISO
// timestamps): the research reader, cleaning and resampler, one session.
absl::StatusOr<TickTable> FromQuotes(absl::string_view text, const std::string& source) {
  ASSIGN_OR_RETURN(std::vector<Tick> rows, ParseQuotesCsv(text, source));
  CleanQuotes clean = CleanTicks(rows);
  ASSIGN_OR_RETURN(Sessions sessions, ResampleQuotes(clean.ticks, SessionSpec{}, "CSV"));
  if (sessions.days.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": holds ", sessions.days.size(),
        " usable 09:30-16:00 sessions; predict takes exactly one day (split the file by date)"));
  }
  TickTable out;
  out.features = ComputeFeatures(sessions.days.front());
  out.steps = sessions.days.front().steps();
  out.from_raw_ticks = true;
  out.dropped_rows = clean.report.dropped();
  return out;
}

// Prices that jump by hundreds of orders of magnitude between two steps give an
// infinite log return; the server refuses non-finite input, so say so here, with
// the step.
absl::StatusOr<TickTable> Finite(absl::StatusOr<TickTable> table, const std::string& source) {
  if (!table.ok()) return table;
  for (size_t i = 0; i < table->features.size(); ++i) {
    if (!std::isfinite(table->features[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": step ", i / kNumFeatures, " gives a non-finite ",
          FeatureColumnNames()[i % kNumFeatures], " (a price jump too large to represent)"));
    }
  }
  return table;
}

}  // namespace

absl::StatusOr<TickTable> ParseTickCsv(absl::string_view text, const std::string& source) {
  ASSIGN_OR_RETURN(CsvTable table, CsvTable::Parse(text, source));
  const std::vector<std::string>& columns = table.header();
  if (columns == std::vector<std::string>{"timestamp", "bid", "ask", "flow"}) {
    return Finite(FromRawTicks(table, source), source);
  }
  if (columns == FeatureColumnNames()) return FromFeatures(table, source);
  if (table.Find({"bid"}) >= 0 && table.Find({"ask"}) >= 0) {
    return Finite(FromQuotes(text, source), source);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": unknown header; expected 'timestamp,bid,ask,flow' (seconds since the open), '",
      absl::StrJoin(FeatureColumnNames(), ","),
      "', or quotes with bid and ask columns and dated timestamps "
      "(timestamp,bid,ask,bid_size,ask_size)"));
}

absl::StatusOr<TickTable> ReadTickCsv(const std::string& path) {
  // The local user's own file: any path, but a regular file of bounded size.
  ASSIGN_OR_RETURN(std::string text, ReadDataFile(path, DataFilePolicy{}));
  return ParseTickCsv(text, path);
}

const std::vector<std::string>& FeatureColumnNames() {
  static const auto* names = new std::vector<std::string>{
      "log_return", "spread_bps", "signed_volume", "tod_sin", "tod_cos", "session_start"};
  return *names;
}

absl::Status WriteFeatureCsv(const std::string& path, const std::vector<float>& features,
                             int64_t steps) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  std::fprintf(file, "%s\n", absl::StrJoin(FeatureColumnNames(), ",").c_str());
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = &features[t * kNumFeatures];
    std::string line;
    for (int f = 0; f < kNumFeatures; ++f) {
      // %.9g round-trips every float exactly, so a replay sends the same bits.
      absl::StrAppend(&line, f ? "," : "", absl::StrFormat("%.9g", row[f]));
    }
    std::fprintf(file, "%s\n", line.c_str());
  }
  if (std::fclose(file) != 0) return absl::DataLossError(absl::StrCat("writing ", path, " failed"));
  return absl::OkStatus();
}

}  // namespace flashtick
