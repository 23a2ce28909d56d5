// Tests for session-grid resampling (carry-last-quote, trade signing, sessions,
// backfill, clock shift, weekends) and for DayContext windows across sessions.
#include "ticks/resample.h"

#include <gtest/gtest.h>

#include "research/data/day_context.h"
#include "ticks/timestamp.h"

namespace flashtick {
namespace {

Tick Quote(const char* time, double bid, double ask) {
  Tick t;
  t.time_us = *ParseTimestamp(time);
  t.bid = bid;
  t.ask = ask;
  return t;
}
Tick Trade(const char* time, double bid, double ask, double px, double size) {
  Tick t = Quote(time, bid, ask);
  t.has_trade = true;
  t.trade_price = px;
  t.trade_size = size;
  return t;
}

TEST(ResampleTest, CarriesTheLastQuoteAndSignsTrades) {
  // Friday 2024-03-01 and Monday 2024-03-04 (the weekend quote is carried, its day skipped).
  std::vector<Tick> ticks = {
      Quote("2024-03-01 09:00:00", 99.0, 99.2),        // pre-open: sets the opening quote
      Quote("2024-03-01 09:30:00.500", 100.0, 100.2),  // inside step 0 → step 0 holds it
      Trade("2024-03-01 09:30:01.100", 100.0, 100.2, 100.0, 100),  // below mid: sell
      Trade("2024-03-01 09:30:01.900", 100.0, 100.2, 100.2, 300),  // above mid: buy
      Trade("2024-03-01 09:30:02.000", 100.0, 100.2, 100.1, 50),   // at mid: 100.2 → 100.1 down
      Quote("2024-03-01 15:59:59.999", 101.0, 101.1),              // last step
      Quote("2024-03-01 16:00:00", 105.0, 105.1),            // after the close: not in the grid
      Quote("2024-03-02 10:00:00", 106.0, 106.1),            // Saturday: skipped, but carried
      Trade("2024-03-04 09:29:59", 107.0, 107.1, 107.1, 9),  // pre-open trade: no flow
      Quote("2024-03-04 12:00:00", 108.0, 108.1),
  };
  SessionSpec spec;
  auto s = ResampleQuotes(ticks, spec, "TEST");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->days.size(), 2u);
  EXPECT_EQ(s->days_skipped, 1);  // Saturday
  const SessionGrid& fri = s->days[0];
  EXPECT_EQ(fri.date, "2024-03-01");
  EXPECT_EQ(fri.instrument, "TEST");
  ASSERT_EQ(fri.steps(), kSessionSeconds);
  EXPECT_DOUBLE_EQ(fri.bid[0], 100.0);  // the quote at 09:30:00.5 is known by the end of step 0
  EXPECT_DOUBLE_EQ(fri.flow[0], 0.0);
  EXPECT_DOUBLE_EQ(fri.flow[1], 300.0 - 100.0);
  EXPECT_DOUBLE_EQ(fri.flow[2], -50.0);  // tick rule: a downtick
  EXPECT_DOUBLE_EQ(fri.bid[kSessionSeconds - 2], 100.0);
  EXPECT_DOUBLE_EQ(fri.bid[kSessionSeconds - 1], 101.0);
  EXPECT_EQ(s->stats[0].trades, 3);
  EXPECT_EQ(s->stats[0].rows_in_session, 5);
  EXPECT_EQ(s->stats[0].backfilled_steps, 0);
  const SessionGrid& mon = s->days[1];
  EXPECT_EQ(mon.date, "2024-03-04");
  EXPECT_DOUBLE_EQ(mon.bid[0], 107.0);  // carried from the pre-open row
  EXPECT_DOUBLE_EQ(mon.bid[2 * 3600 + 30 * 60 - 1], 107.0);
  EXPECT_DOUBLE_EQ(mon.bid[2 * 3600 + 30 * 60], 108.0);
  for (double f : mon.flow) ASSERT_EQ(f, 0.0);
}

TEST(ResampleTest, BackfillsOnlyBeforeTheFirstQuoteOfTheData) {
  std::vector<Tick> ticks = {Quote("2024-03-01 09:30:10", 50.0, 50.5)};
  auto s = ResampleQuotes(ticks, SessionSpec{}, "X");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->stats[0].backfilled_steps, 10);
  EXPECT_DOUBLE_EQ(s->days[0].bid[0], 50.0);
}

TEST(ResampleTest, ClockShiftCustomGridsAndBars) {
  // Half-hourly bars stamped in UTC, read on a UTC+7 clock over a whole-day grid.
  auto bars = std::vector<Bar>{};
  for (int h = 0; h < 3; ++h) {
    Bar b;
    b.time_us = *ParseTimestamp("2024-03-04 02:00:00") + h * 1800 * kMicrosPerSecond;
    b.open = 10;
    b.close = h == 1 ? 9.0 : 11.0;
    b.high = 11;
    b.low = 9;
    b.volume = 5;
    bars.push_back(b);
  }
  SessionSpec spec;
  spec.open_second = 0;
  spec.step_us = 1800 * kMicrosPerSecond;
  spec.steps = 48;
  spec.clock_shift_seconds = 7 * 3600;
  auto s = ResampleBars(bars, spec, "FX");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->days.size(), 1u);
  EXPECT_EQ(s->days[0].steps(), 48);
  EXPECT_EQ(s->stats[0].backfilled_steps, 18);  // 09:00 local is step 18
  EXPECT_DOUBLE_EQ(s->days[0].bid[18], 11.0);
  EXPECT_DOUBLE_EQ(s->days[0].bid[19], 9.0);
  EXPECT_DOUBLE_EQ(s->days[0].ask[47], 11.0);
  EXPECT_DOUBLE_EQ(s->days[0].flow[19], -5.0);
  EXPECT_DOUBLE_EQ(s->days[0].flow[20], 5.0);
}

TEST(ResampleTest, RejectsBadSpecsAndUnsortedInput) {
  SessionSpec spec;
  spec.steps = 0;
  EXPECT_EQ(ResampleQuotes({}, spec, "X").status().code(), absl::StatusCode::kInvalidArgument);
  spec = SessionSpec{};
  spec.open_second = 20 * 3600;  // 20:00 + 6.5 h crosses midnight
  EXPECT_FALSE(ResampleQuotes({}, spec, "X").ok());
  std::vector<Tick> unsorted = {Quote("2024-03-01 10:00:00", 1, 2),
                                Quote("2024-03-01 09:59:00", 1, 2)};
  EXPECT_EQ(ResampleQuotes(unsorted, SessionSpec{}, "X").status().code(),
            absl::StatusCode::kFailedPrecondition);
  auto empty = ResampleQuotes({}, SessionSpec{}, "X");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->days.empty());
}

TEST(DayContextTest, WindowsReachBackAcrossSessions) {
  std::vector<SessionGrid> days = {SimpleSyntheticDay(1, 100, "S", "2024-03-01"),
                                   SimpleSyntheticDay(2, 50, "S", "2024-03-04")};
  auto c = DayContext::Build(days);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->total_steps(), 150);
  EXPECT_EQ(c->day_offset(1), 100);
  const int64_t n = 80;
  std::vector<float> w(n * kNumFeatures, -1.0f);
  // Day 1 step 9: rows are day0 steps 30..99 then day1 steps 0..9.
  auto real = c->Window(1, 9, n, w.data());
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(*real, n);
  EXPECT_EQ(w[(n - 10) * kNumFeatures + 5], 1.0f);  // the overnight gap is marked
  EXPECT_EQ(w[(n - 11) * kNumFeatures + 5], 0.0f);
  EXPECT_EQ(w[(n - 10) * kNumFeatures + 0], 0.0f);  // no overnight return
  const std::vector<float> f0 = ComputeFeatures(days[0]);
  for (int j = 0; j < kNumFeatures; ++j) EXPECT_EQ(w[j], f0[30 * kNumFeatures + j]);
  // Day 0 step 4 with n = 80: 75 padded rows of zeros, 5 real.
  real = c->Window(0, 4, n, w.data());
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(*real, 5);
  for (int i = 0; i < 75 * kNumFeatures; ++i) ASSERT_EQ(w[i], 0.0f);
  EXPECT_EQ(w[75 * kNumFeatures + 5], 1.0f);
  EXPECT_FALSE(c->Window(1, 50, n, w.data()).ok());
  EXPECT_FALSE(c->Window(2, 0, n, w.data()).ok());
  std::vector<SessionGrid> unordered = {days[1], days[0]};
  EXPECT_FALSE(DayContext::Build(unordered).ok());
}

}  // namespace
}  // namespace flashtick
