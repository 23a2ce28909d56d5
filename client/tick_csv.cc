// Tick CSV reader and feature CSV writer (see tick_csv.h).
#include "client/tick_csv.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "train/features.h"

namespace flashtick {
namespace {

constexpr double kOpenSecondsOfDay = 9 * 3600 + 30 * 60;  // 09:30:00

std::vector<std::string> SplitRow(const std::string& line) {
  std::vector<std::string> cells = absl::StrSplit(line, ',');
  for (auto& cell : cells) cell = std::string(absl::StripAsciiWhitespace(cell));
  return cells;
}

// Seconds since the open from "1234.5" or "HH:MM:SS[.fff]".
bool ParseTimestamp(const std::string& text, double* seconds) {
  if (text.find(':') == std::string::npos) return absl::SimpleAtod(text, seconds);
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  int hours = 0, minutes = 0;
  double secs = 0;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &hours) ||
      !absl::SimpleAtoi(parts[1], &minutes) || !absl::SimpleAtod(parts[2], &secs)) {
    return false;
  }
  *seconds = hours * 3600.0 + minutes * 60.0 + secs - kOpenSecondsOfDay;
  return true;
}

absl::Status LineError(const std::string& path, int line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", what));
}

absl::StatusOr<TickTable> ReadRaw(const std::string& path, std::ifstream& in) {
  SessionGrid grid;
  std::string line;
  int line_number = 1;
  int64_t first_step = -1;
  while (std::getline(in, line)) {
    ++line_number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<std::string> cells = SplitRow(line);
    if (cells.size() != 4) {
      return LineError(path, line_number, absl::StrCat("expected 4 columns, got ", cells.size()));
    }
    double seconds = 0, bid = 0, ask = 0, flow = 0;
    if (!ParseTimestamp(cells[0], &seconds)) {
      return LineError(path, line_number,
                       "timestamp is neither seconds since the open nor HH:MM:SS");
    }
    if (!absl::SimpleAtod(cells[1], &bid) || !absl::SimpleAtod(cells[2], &ask) ||
        !absl::SimpleAtod(cells[3], &flow) || !std::isfinite(bid) || !std::isfinite(ask) ||
        !std::isfinite(flow) || bid <= 0 || ask <= 0) {
      return LineError(path, line_number, "bid, ask and flow must be finite; prices positive");
    }
    if (seconds < 0 || seconds >= kSessionSeconds) {
      return LineError(path, line_number,
                       absl::StrCat("timestamp is ", seconds,
                                    " s from the open, outside the 09:30-16:00 session"));
    }
    const int64_t step = static_cast<int64_t>(std::floor(seconds));
    if (step < grid.steps() - 1) {
      return LineError(path, line_number, "timestamps go backwards; sort the file by time");
    }
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
  if (grid.steps() == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": no tick rows"));
  TickTable table;
  table.features = ComputeFeatures(grid);
  table.steps = grid.steps();
  table.from_raw_ticks = true;
  table.backfilled_steps = first_step;
  return table;
}

absl::StatusOr<TickTable> ReadFeatures(const std::string& path, std::ifstream& in) {
  TickTable table;
  std::string line;
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<std::string> cells = SplitRow(line);
    if (static_cast<int>(cells.size()) != kNumFeatures) {
      return LineError(path, line_number,
                       absl::StrCat("expected ", kNumFeatures, " columns, got ", cells.size()));
    }
    for (int f = 0; f < kNumFeatures; ++f) {
      float value = 0;
      if (!absl::SimpleAtof(cells[f], &value) || !std::isfinite(value)) {
        return LineError(path, line_number,
                         absl::StrCat("column ", FeatureColumnNames()[f], " is not a finite number"));
      }
      table.features.push_back(value);
    }
    ++table.steps;
  }
  if (table.steps == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": no feature rows"));
  return table;
}

}  // namespace

const std::vector<std::string>& FeatureColumnNames() {
  static const auto* names = new std::vector<std::string>{
      "log_return", "spread_bps", "signed_volume", "tod_sin", "tod_cos", "session_start"};
  return *names;
}

absl::StatusOr<TickTable> ReadTickCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::string header;
  if (!std::getline(in, header)) return absl::InvalidArgumentError(absl::StrCat(path, " is empty"));
  const std::vector<std::string> columns = SplitRow(header);
  if (columns == std::vector<std::string>{"timestamp", "bid", "ask", "flow"}) {
    return ReadRaw(path, in);
  }
  if (columns == FeatureColumnNames()) return ReadFeatures(path, in);
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": unknown header '", header, "'; expected 'timestamp,bid,ask,flow' or '",
      absl::StrJoin(FeatureColumnNames(), ","), "'"));
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
