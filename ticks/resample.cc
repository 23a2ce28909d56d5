// Session-grid resampling (see resample.h). Quotes and bars are first turned
// into a common event list (time, bid, ask, signed flow, is-trade), then one
// pass walks the events and the kept sessions together.
#include "ticks/resample.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ticks/timestamp.h"

namespace flashtick {
namespace {

struct Event {
  int64_t time_us;
  double bid, ask;
  double flow;  // signed volume
  bool trade;
  bool unsigned_trade;
};

absl::StatusOr<Sessions> ResampleEvents(const std::vector<Event>& ev, const SessionSpec& spec,
                                        const std::string& instrument) {
  RETURN_IF_ERROR(spec.Validate());
  for (size_t i = 1; i < ev.size(); ++i) {
    if (ev[i].time_us < ev[i - 1].time_us) {
      return absl::FailedPreconditionError(
          "resample: rows go back in time; run CleanTicks/CleanBars first");
    }
  }
  const int64_t open_us = spec.open_second * kMicrosPerSecond;
  const int64_t window_us = spec.steps * spec.step_us;

  // Sessions to keep: dates with enough rows inside the window.
  std::vector<int64_t> days;
  std::vector<int64_t> rows_in;
  int64_t skipped = 0;
  for (size_t i = 0; i < ev.size();) {
    const int64_t day = DayOf(ev[i].time_us);
    const int64_t w0 = day * kMicrosPerDay + open_us;
    int64_t inside = 0;
    size_t j = i;
    for (; j < ev.size() && DayOf(ev[j].time_us) == day; ++j) {
      inside += ev[j].time_us >= w0 && ev[j].time_us < w0 + window_us;
    }
    const bool weekend = spec.weekdays_only && Weekday(day) >= 5;
    if (inside >= spec.min_rows_in_session && !weekend) {
      days.push_back(day);
      rows_in.push_back(inside);
    } else {
      ++skipped;
    }
    i = j;
  }

  Sessions out;
  out.days_skipped = skipped;
  size_t i = 0;
  bool have_quote = false;
  double bid = 0, ask = 0;
  for (size_t d = 0; d < days.size(); ++d) {
    const int64_t w0 = days[d] * kMicrosPerDay + open_us;
    SessionGrid g;
    g.instrument = instrument;
    g.date = FormatDate(days[d]);
    g.bid.resize(spec.steps);
    g.ask.resize(spec.steps);
    g.flow.assign(spec.steps, 0.0);
    SessionStats st;
    st.date = g.date;
    st.rows_in_session = rows_in[d];
    int64_t backfill_until = 0;  // steps [0, backfill_until) lack a carried quote
    for (int64_t t = 0; t < spec.steps; ++t) {
      const int64_t start = w0 + t * spec.step_us;
      const int64_t end = start + spec.step_us;
      for (; i < ev.size() && ev[i].time_us < end; ++i) {
        bid = ev[i].bid;
        ask = ev[i].ask;
        have_quote = true;
        if (ev[i].trade && ev[i].time_us >= start) {
          g.flow[t] += ev[i].flow;
          ++st.trades;
          st.unsigned_trades += ev[i].unsigned_trade;
        }
      }
      if (!have_quote) {
        backfill_until = t + 1;
        continue;
      }
      g.bid[t] = bid;
      g.ask[t] = ask;
    }
    if (backfill_until > 0) {
      // Only the first session can get here, and it has ≥ 1 row inside its window,
      // so a quote exists at some step ≥ backfill_until.
      if (backfill_until >= spec.steps) {
        return absl::InternalError("resample: a kept session has no quote inside its window");
      }
      for (int64_t t = 0; t < backfill_until; ++t) {
        g.bid[t] = g.bid[backfill_until];
        g.ask[t] = g.ask[backfill_until];
      }
      st.backfilled_steps = backfill_until;
    }
    out.days.push_back(std::move(g));
    out.stats.push_back(st);
  }
  return out;
}

}  // namespace

absl::Status SessionSpec::Validate() const {
  if (step_us <= 0 || steps <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("session spec: step_us (", step_us,
                                                   ") and steps (", steps, ") must be positive"));
  }
  if (open_second < 0 || steps > kMicrosPerDay / step_us ||
      open_second * kMicrosPerSecond + steps * step_us > kMicrosPerDay) {
    return absl::InvalidArgumentError(absl::StrCat(
        "session spec: the window (open ", open_second, " s + ", steps, " steps of ", step_us,
        " us) must lie within one calendar day; shift the clock for sessions over midnight"));
  }
  if (std::llabs(clock_shift_seconds) > kSecondsPerDay) {
    return absl::InvalidArgumentError("session spec: clock_shift_seconds beyond ±1 day");
  }
  return absl::OkStatus();
}

absl::StatusOr<Sessions> ResampleQuotes(const std::vector<Tick>& ticks, const SessionSpec& spec,
                                        const std::string& instrument) {
  RETURN_IF_ERROR(spec.Validate());
  std::vector<Event> ev;
  ev.reserve(ticks.size());
  const int64_t shift = spec.clock_shift_seconds * kMicrosPerSecond;
  double last_price = 0;
  int last_sign = 0;  // tick rule: sign of the last nonzero trade-price change
  for (const Tick& t : ticks) {
    Event e{t.time_us + shift, t.bid, t.ask, 0.0, t.has_trade, false};
    if (t.has_trade) {
      const double mid = 0.5 * (t.bid + t.ask);
      if (last_price > 0 && t.trade_price != last_price) {
        last_sign = t.trade_price > last_price ? 1 : -1;
      }
      last_price = t.trade_price;
      int sign = t.trade_price > mid ? 1 : t.trade_price < mid ? -1 : last_sign;
      e.unsigned_trade = sign == 0;
      e.flow = sign * t.trade_size;
    }
    ev.push_back(e);
  }
  return ResampleEvents(ev, spec, instrument);
}

absl::StatusOr<Sessions> ResampleBars(const std::vector<Bar>& bars, const SessionSpec& spec,
                                      const std::string& instrument) {
  RETURN_IF_ERROR(spec.Validate());
  std::vector<Event> ev;
  ev.reserve(bars.size());
  const int64_t shift = spec.clock_shift_seconds * kMicrosPerSecond;
  for (const Bar& b : bars) {
    const double sign = b.close > b.open ? 1.0 : b.close < b.open ? -1.0 : 0.0;
    ev.push_back(Event{b.time_us + shift, b.close, b.close, sign * b.volume, b.volume > 0,
                       b.volume > 0 && sign == 0.0});
  }
  return ResampleEvents(ev, spec, instrument);
}

}  // namespace flashtick
