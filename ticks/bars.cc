// ParseBarsCsv (see bars.h).
#include "ticks/bars.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ticks/csv_table.h"

namespace flashtick {

absl::StatusOr<std::vector<Bar>> ParseBarsCsv(absl::string_view text,
                                              absl::string_view source_name) {
  ASSIGN_OR_RETURN(CsvTable table, CsvTable::Parse(text, source_name));
  const int c_time = table.TimeColumn();
  const int c_close = table.Find({"close", "price", "last"});
  if (c_close < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": the header needs a 'close' (or 'price') column"));
  }
  const int c_open = table.Find({"open"});
  const int c_high = table.Find({"high"});
  const int c_low = table.Find({"low"});
  const int c_vol = table.Find({"volume", "vol"});

  std::vector<Bar> bars;
  bars.reserve(table.rows().size());
  for (const CsvRow& row : table.rows()) {
    Bar b;
    b.line = row.line;
    ASSIGN_OR_RETURN(b.time_us, table.Time(row, c_time));
    ASSIGN_OR_RETURN(b.close, table.Number(row, c_close));
    b.open = b.high = b.low = b.close;
    if (c_open >= 0) {
      ASSIGN_OR_RETURN(b.open, table.Number(row, c_open, true, b.close));
    }
    if (c_high >= 0) {
      ASSIGN_OR_RETURN(b.high, table.Number(row, c_high, true, b.close));
    }
    if (c_low >= 0) {
      ASSIGN_OR_RETURN(b.low, table.Number(row, c_low, true, b.close));
    }
    if (c_vol >= 0) {
      ASSIGN_OR_RETURN(b.volume, table.Number(row, c_vol, true));
    }
    bars.push_back(b);
  }
  return bars;
}

absl::StatusOr<std::vector<Bar>> ReadBarsCsvFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseBarsCsv(text, path);
}

}  // namespace flashtick
