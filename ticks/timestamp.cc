// Civil timestamp parsing and formatting (see timestamp.h). Calendar algorithms
// from H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (2013).
#include "ticks/timestamp.h"

#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `width` digits at text[*pos]; false when they are not all digits.
bool ReadDigits(absl::string_view text, size_t* pos, int width, int64_t* out) {
  if (*pos + width > text.size()) return false;
  int64_t v = 0;
  for (int i = 0; i < width; ++i) {
    const char c = text[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += width;
  *out = v;
  return true;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("timestamp '", text, "': ", why,
                                                 " (expected YYYY-MM-DD[ HH:MM[:SS[.ffffff]]])"));
}

}  // namespace

int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                   // [0, 399]
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           // [0, 146096]
  return era * 146097 + doe - 719468;
}

int64_t DayOf(int64_t micros) {
  int64_t d = micros / kMicrosPerDay;
  if (micros % kMicrosPerDay < 0) --d;
  return d;
}

std::string FormatDate(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lld", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d));
  return buf;
}

std::string FormatTimestamp(int64_t micros) {
  const int64_t day = DayOf(micros);
  const int64_t in_day = micros - day * kMicrosPerDay;
  const int64_t secs = in_day / kMicrosPerSecond;
  const int64_t frac = in_day % kMicrosPerSecond;
  char buf[80];
  std::snprintf(buf, sizeof(buf), " %02lld:%02lld:%02lld", static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  std::string out = FormatDate(day) + buf;
  if (frac != 0) {
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

int Weekday(int64_t day) {
  // 1970-01-01 was a Thursday (3 when Monday is 0).
  const int64_t w = (day + 3) % 7;
  return static_cast<int>(w < 0 ? w + 7 : w);
}

absl::StatusOr<int64_t> ParseTimestamp(absl::string_view text) {
  size_t pos = 0;
  int64_t year, month, day, hour = 0, minute = 0, second = 0, micros = 0;
  if (!ReadDigits(text, &pos, 4, &year) || pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 2, &month) || pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 2, &day)) {
    return Bad(text, "no date");
  }
  if (year < 1900 || year > 2199) return Bad(text, "year outside 1900..2199");
  if (month < 1 || month > 12) return Bad(text, "month outside 1..12");
  if (day < 1 || day > DaysInMonth(year, static_cast<int>(month))) {
    return Bad(text, "no such day in that month");
  }
  if (pos < text.size() && (text[pos] == ' ' || text[pos] == 'T')) {
    ++pos;
    if (!ReadDigits(text, &pos, 2, &hour) || pos >= text.size() || text[pos++] != ':' ||
        !ReadDigits(text, &pos, 2, &minute)) {
      return Bad(text, "bad time of day");
    }
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!ReadDigits(text, &pos, 2, &second)) return Bad(text, "bad seconds");
      if (pos < text.size() && text[pos] == '.') {
        ++pos;
        int digits = 0;
        int64_t scale = 100000;
        while (pos < text.size() && IsDigit(text[pos]) && digits < 9) {
          if (scale > 0) micros += (text[pos] - '0') * scale;
          scale /= 10;
          ++pos;
          ++digits;
        }
        if (digits == 0) return Bad(text, "empty fraction of a second");
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return Bad(text, "time of day out of range");
  }
  if (pos < text.size() && text[pos] == 'Z') ++pos;
  if (pos != text.size()) return Bad(text, "trailing characters");
  const int64_t days = DaysFromCivil(year, static_cast<int>(month), static_cast<int>(day));
  return ((days * kSecondsPerDay + hour * 3600 + minute * 60 + second) * kMicrosPerSecond) + micros;
}

}  // namespace flashtick
