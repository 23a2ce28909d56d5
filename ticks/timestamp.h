// Civil timestamps for tick files: microseconds since 1970-01-01 00:00:00 of the
// exchange's local clock (no time zone is applied; shift with SessionSpec when a
// file is in UTC). Parsing is pure (text in, StatusOr out) so a fuzz target can
// drive it. Calendar math: Howard Hinnant's days_from_civil / civil_from_days,
// exact for the proleptic Gregorian calendar.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kSecondsPerDay = 86400;
constexpr int64_t kMicrosPerDay = kSecondsPerDay * kMicrosPerSecond;

// Accepts "YYYY-MM-DD", "YYYY-MM-DD HH:MM", "YYYY-MM-DD HH:MM:SS" and
// "YYYY-MM-DD HH:MM:SS.ffffff" (1–9 fraction digits, truncated to microseconds),
// with ' ' or 'T' between date and time and an optional trailing 'Z'.
// Years 1900..2199; fields range-checked (no leap seconds).
absl::StatusOr<int64_t> ParseTimestamp(absl::string_view text);

// Days since 1970-01-01 for a civil date (month 1..12, day 1..31, not validated).
int64_t DaysFromCivil(int64_t year, int month, int day);

// Day index (floor division, correct before 1970) of a timestamp.
int64_t DayOf(int64_t micros);

// "YYYY-MM-DD" of a day index, and "YYYY-MM-DD HH:MM:SS[.ffffff]" of a timestamp.
std::string FormatDate(int64_t day);
std::string FormatTimestamp(int64_t micros);

// 0 = Monday .. 6 = Sunday.
int Weekday(int64_t day);

}  // namespace flashtick
