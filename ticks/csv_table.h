// CsvTable: a small RFC 4180 reader for tick and bar exports. Pure (text in,
// StatusOr out) so a fuzz target can drive it; every row remembers its 1-based
// line number for error messages. Handles quoted fields with "" escapes, CRLF,
// blank lines, '#' comment lines, and a delimiter detected from the header
// (',', ';' or tab; the most frequent outside quotes wins). Header names are
// matched case-insensitively after trimming spaces.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

struct CsvRow {
  int64_t line = 0;  // 1-based line number in the input
  std::vector<std::string> fields;
};

class CsvTable {
 public:
  // `source` names the input in error messages ("quotes.csv line 7: ...").
  static absl::StatusOr<CsvTable> Parse(absl::string_view text, absl::string_view source);

  const std::vector<std::string>& header() const { return header_; }
  const std::vector<CsvRow>& rows() const { return rows_; }
  const std::string& source() const { return source_; }
  char delimiter() const { return delimiter_; }

  // Index of the first header name matching one of `aliases` (lower case), or −1.
  int Find(std::initializer_list<absl::string_view> aliases) const;
  // The timestamp column every reader uses: the first header named timestamp, time,
  // datetime or date, else column 0.
  int TimeColumn() const;

  // Parses field `col` of `row` as a finite double. An empty field gives
  // `empty_value` when `optional`, else an error naming the line and column.
  absl::StatusOr<double> Number(const CsvRow& row, int col, bool optional = false,
                                double empty_value = 0.0) const;
  // Parses field `col` as a timestamp (ticks/timestamp.h).
  absl::StatusOr<int64_t> Time(const CsvRow& row, int col) const;
  // "column 'bid'" for a header the readers know, else "column 3": messages never
  // carry text from the file (docs/security.md).
  std::string ColumnName(int col) const;

 private:
  std::string source_;
  char delimiter_ = ',';
  std::vector<std::string> header_;
  std::vector<CsvRow> rows_;
};

// Reads a whole file into a string under the process's DataFilePolicy
// (ticks/data_file.h: confinement, regular files only, byte cap).
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

}  // namespace flashtick
