// CsvTable (see csv_table.h): a single pass over the text with a quote state
// machine; rows must have as many fields as the header.
#include "ticks/csv_table.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ticks/data_file.h"
#include "ticks/timestamp.h"

namespace flashtick {
namespace {


char DetectDelimiter(absl::string_view line) {
  int comma = 0, semi = 0, tab = 0;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    comma += c == ',';
    semi += c == ';';
    tab += c == '\t';
  }
  if (semi > comma && semi >= tab) return ';';
  if (tab > comma && tab > semi) return '\t';
  return ',';
}

// Splits one logical line. `line` excludes the newline; a quote left open is an error.
absl::StatusOr<std::vector<std::string>> SplitLine(absl::string_view line, char delim) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          fields.back() += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delim) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) return absl::InvalidArgumentError("unterminated quoted field");
  for (std::string& f : fields) f = std::string(absl::StripAsciiWhitespace(f));
  return fields;
}

// A bad field for a message: its length, never its text. The file may be one the
// client could not otherwise read (docs/security.md), so messages that reach the
// client must not carry its bytes.
std::string Shown(absl::string_view field) {
  return absl::StrCat("a field of ", field.size(), " character", field.size() == 1 ? "" : "s");
}

// Header names the readers look for (quotes.cc, bars.cc, TimeColumn). Any other
// header text came from the file and stays out of messages.
bool KnownColumnName(absl::string_view name) {
  static constexpr absl::string_view kKnown[] = {
      "timestamp", "time",      "datetime",    "date",  "bid",        "ask",
      "bid_size",  "bidsize",   "ask_size",    "asksize", "trade_price", "price",
      "last",      "trade_size", "size",       "volume", "vol",        "source",
      "contributor", "venue",   "open",        "high",  "low",        "close"};
  for (absl::string_view k : kKnown) {
    if (name == k) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<CsvTable> CsvTable::Parse(absl::string_view text, absl::string_view source) {
  CsvTable table;
  table.source_ = std::string(source);
  bool have_header = false;
  int64_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty() || line.front() == '#') continue;
    if (line.find('\0') != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " line ", line_no, ": NUL byte; is this a binary file?"));
    }
    if (!have_header) {
      table.delimiter_ = DetectDelimiter(line);
      auto header = SplitLine(line, table.delimiter_);
      if (!header.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(source, " line ", line_no, ": header: ", header.status().message()));
      }
      for (std::string& h : *header) h = absl::AsciiStrToLower(h);
      table.header_ = std::move(*header);
      have_header = true;
      continue;
    }
    auto fields = SplitLine(line, table.delimiter_);
    if (!fields.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " line ", line_no, ": ", fields.status().message()));
    }
    if (fields->size() != table.header_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, " line ", line_no, ": ", fields->size(), " fields, the header has ",
          table.header_.size(), " (delimiter '", std::string(1, table.delimiter_), "')"));
    }
    table.rows_.push_back(CsvRow{line_no, std::move(*fields)});
  }
  if (!have_header) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": empty, no header line"));
  }
  return table;
}

int CsvTable::Find(std::initializer_list<absl::string_view> aliases) const {
  for (absl::string_view alias : aliases) {
    for (size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == alias) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string CsvTable::ColumnName(int col) const {
  if (KnownColumnName(header_[col])) return absl::StrCat("column '", header_[col], "'");
  return absl::StrCat("column ", col + 1);
}

int CsvTable::TimeColumn() const {
  const int c = Find({"timestamp", "time", "datetime", "date"});
  return c < 0 ? 0 : c;
}

absl::StatusOr<double> CsvTable::Number(const CsvRow& row, int col, bool optional,
                                        double empty_value) const {
  const std::string& f = row.fields[col];
  if (f.empty()) {
    if (optional) return empty_value;
    return absl::InvalidArgumentError(
        absl::StrCat(source_, " line ", row.line, ": ", ColumnName(col), " is empty"));
  }
  double v = 0.0;
  if (!absl::SimpleAtod(f, &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(absl::StrCat(source_, " line ", row.line, ": ", ColumnName(col),
                                                   ": ", Shown(f),
                                                   " is not a finite number"));
  }
  return v;
}

absl::StatusOr<int64_t> CsvTable::Time(const CsvRow& row, int col) const {
  auto t = ParseTimestamp(row.fields[col]);
  if (!t.ok()) {
    // ParseTimestamp's message quotes the field; say only what was expected.
    return absl::InvalidArgumentError(absl::StrCat(
        source_, " line ", row.line, ": ", ColumnName(col), ": ", Shown(row.fields[col]),
        " is not a timestamp (expected YYYY-MM-DD[ HH:MM[:SS[.ffffff]]])"));
  }
  return *t;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  return ReadDataFile(path, GetDataFilePolicy());
}

}  // namespace flashtick
