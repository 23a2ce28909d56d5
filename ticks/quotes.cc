// ParseQuotesCsv (see quotes.h): header lookup, then one Tick per row.
#include "ticks/quotes.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ticks/csv_table.h"

namespace flashtick {

absl::StatusOr<std::vector<Tick>> ParseQuotesCsv(absl::string_view text,
                                                 absl::string_view source_name) {
  ASSIGN_OR_RETURN(CsvTable table, CsvTable::Parse(text, source_name));
  const int c_time = table.TimeColumn();
  const int c_bid = table.Find({"bid"});
  const int c_ask = table.Find({"ask"});
  if (c_bid < 0 || c_ask < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name,
                     ": the header needs 'bid' and 'ask' columns (a bars file? use "
                     "ParseBarsCsv)"));
  }
  const int c_bsz = table.Find({"bid_size", "bidsize"});
  const int c_asz = table.Find({"ask_size", "asksize"});
  const int c_px = table.Find({"trade_price", "price", "last"});
  const int c_sz = table.Find({"trade_size", "size", "volume"});
  const int c_src = table.Find({"source", "contributor", "venue"});

  std::vector<Tick> ticks;
  ticks.reserve(table.rows().size());
  for (const CsvRow& row : table.rows()) {
    Tick t;
    t.line = row.line;
    ASSIGN_OR_RETURN(t.time_us, table.Time(row, c_time));
    ASSIGN_OR_RETURN(t.bid, table.Number(row, c_bid));
    ASSIGN_OR_RETURN(t.ask, table.Number(row, c_ask));
    if (c_bsz >= 0) {
      ASSIGN_OR_RETURN(t.bid_size, table.Number(row, c_bsz, true));
    }
    if (c_asz >= 0) {
      ASSIGN_OR_RETURN(t.ask_size, table.Number(row, c_asz, true));
    }
    if (c_px >= 0 && !row.fields[c_px].empty()) {
      t.has_trade = true;
      ASSIGN_OR_RETURN(t.trade_price, table.Number(row, c_px));
      if (c_sz >= 0) {
        ASSIGN_OR_RETURN(t.trade_size, table.Number(row, c_sz, true));
      }
      if (t.trade_size < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(source_name, " line ", row.line, ": negative trade size"));
      }
    }
    if (c_src >= 0) t.source = row.fields[c_src];
    ticks.push_back(std::move(t));
  }
  return ticks;
}

absl::StatusOr<std::vector<Tick>> ReadQuotesCsvFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseQuotesCsv(text, path);
}

}  // namespace flashtick
