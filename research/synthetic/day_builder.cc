// BuildDays / AddWeekdays (see day_builder.h).
#include "research/synthetic/day_builder.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ticks/timestamp.h"

namespace flashtick {
namespace {
constexpr double kBps = 1e4;
}  // namespace

absl::StatusOr<std::string> AddWeekdays(const std::string& date, int64_t n) {
  ASSIGN_OR_RETURN(int64_t t, ParseTimestamp(date));
  int64_t day = DayOf(t);
  if (Weekday(day) >= 5) {
    return absl::InvalidArgumentError(absl::StrCat("first date ", date, " is a weekend day"));
  }
  while (n > 0) {
    ++day;
    if (Weekday(day) < 5) --n;
  }
  return FormatDate(day);
}

absl::StatusOr<std::vector<SessionGrid>> BuildDays(const DaySeries& s, int64_t steps_per_day,
                                                   const std::string& instrument,
                                                   const std::string& first_date,
                                                   double start_mid) {
  const int64_t total = static_cast<int64_t>(s.return_bps.size());
  if (steps_per_day <= 0 || total % steps_per_day != 0 ||
      static_cast<int64_t>(s.flow.size()) != total ||
      static_cast<int64_t>(s.spread_bps.size()) != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic days: ", total, " returns, ", s.flow.size(), " flows, ", s.spread_bps.size(),
        " spreads must be equal and a multiple of steps_per_day ", steps_per_day));
  }
  std::vector<SessionGrid> days;
  double log_mid = std::log(start_mid);
  for (int64_t d = 0; d * steps_per_day < total; ++d) {
    SessionGrid g;
    g.instrument = instrument;
    ASSIGN_OR_RETURN(g.date, AddWeekdays(first_date, d));
    g.bid.resize(steps_per_day);
    g.ask.resize(steps_per_day);
    g.flow.resize(steps_per_day);
    for (int64_t t = 0; t < steps_per_day; ++t) {
      const int64_t i = d * steps_per_day + t;
      if (i > 0) log_mid += s.return_bps[i] / kBps;
      const double mid = std::exp(log_mid);
      const double half = 0.5 * s.spread_bps[i] / kBps * mid;
      g.bid[t] = mid - half;
      g.ask[t] = mid + half;
      g.flow[t] = s.flow[i];
    }
    days.push_back(std::move(g));
  }
  return days;
}

}  // namespace flashtick
