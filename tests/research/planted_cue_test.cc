// Tests for the planted-cue generator and its null twin: motif placement, the
// drift at lag L, determinism, the twin's independence of cue and drift sign,
// cross-day lags, and the day builder.
#include "research/synthetic/planted_cue.h"

#include <gtest/gtest.h>

#include <cmath>

#include "research/synthetic/day_builder.h"

namespace flashtick {
namespace {

double MidAt(const PlantedCueData& d, int64_t step) {
  const int64_t per = d.days[0].steps();
  return d.days[step / per].mid(step % per);
}
double FlowAt(const PlantedCueData& d, int64_t step) {
  const int64_t per = d.days[0].steps();
  return d.days[step / per].flow[step % per];
}

TEST(PlantedCueTest, MotifsDriftsAndCallSteps) {
  PlantedCueConfig cfg;
  cfg.num_days = 2;
  cfg.seed = 11;
  auto d = GeneratePlantedCue(cfg);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->days.size(), 2u);
  EXPECT_EQ(d->days[0].date, "2026-01-05");
  EXPECT_EQ(d->days[1].date, "2026-01-06");
  ASSERT_EQ(d->events.size(), 3u * 6 * 2);
  int per_family[3] = {0, 0, 0};
  for (const PlantedEvent& e : d->events) {
    ++per_family[e.lag_family];
    EXPECT_EQ(e.lag, cfg.lags[e.lag_family]);
    EXPECT_EQ(e.call_step, e.cue_step + e.lag - 1);
    EXPECT_EQ(e.drift_sign, e.cue_sign);
    // Without cross_day the cue and the whole drift lie in one session.
    EXPECT_EQ(e.cue_step / cfg.steps_per_day,
              (e.cue_step + e.lag + cfg.horizon - 1) / cfg.steps_per_day);
    // The motif: [A,0,A,0] for +1, [0,A,0,A] for −1.
    for (int i = 0; i < 4; ++i) {
      const bool on = (i % 2 == 0) == (e.cue_sign > 0);
      EXPECT_EQ(FlowAt(*d, e.cue_step + i), on ? cfg.motif_amplitude : 0.0);
    }
    // The drift: b·k = 20 bp against noise σ·√k = 5 bp; every event shows its sign.
    const double move = std::log(MidAt(*d, e.call_step + cfg.horizon) / MidAt(*d, e.call_step));
    EXPECT_EQ(move > 0 ? 1 : -1, e.drift_sign) << "event at " << e.call_step;
  }
  EXPECT_EQ(per_family[0], 12);
  EXPECT_EQ(per_family[2], 12);
  for (size_t i = 1; i < d->events.size(); ++i) {
    EXPECT_LT(d->events[i - 1].call_step, d->events[i].call_step);
  }
}

TEST(PlantedCueTest, DeterministicFromTheSeed) {
  PlantedCueConfig cfg;
  cfg.steps_per_day = 5000;
  cfg.lags = {300, 3000};
  cfg.events_per_lag_per_day = 3;
  cfg.seed = 5;
  auto a = GeneratePlantedCue(cfg);
  auto b = GeneratePlantedCue(cfg);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->days[0].bid, b->days[0].bid);
  EXPECT_EQ(a->days[0].flow, b->days[0].flow);
  cfg.seed = 6;
  auto c = GeneratePlantedCue(cfg);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->days[0].bid, c->days[0].bid);
}

TEST(PlantedCueTest, NullTwinSharesEverythingButTheDriftSign) {
  PlantedCueConfig cfg;
  cfg.num_days = 40;
  cfg.seed = 2024;
  auto planted = GeneratePlantedCue(cfg);
  cfg.null_twin = true;
  auto twin = GeneratePlantedCue(cfg);
  ASSERT_TRUE(planted.ok() && twin.ok());
  ASSERT_EQ(planted->events.size(), twin->events.size());
  const int64_t n = static_cast<int64_t>(twin->events.size());
  int64_t agree = 0;
  for (int64_t i = 0; i < n; ++i) {
    const PlantedEvent& p = planted->events[i];
    const PlantedEvent& t = twin->events[i];
    ASSERT_EQ(p.cue_step, t.cue_step);
    ASSERT_EQ(p.cue_sign, t.cue_sign);
    agree += t.drift_sign == t.cue_sign;
  }
  // Independent fair coins: agreement ~ Binomial(n, ½). n = 720; 3σ = 0.056.
  const double share = static_cast<double>(agree) / n;
  EXPECT_NEAR(share, 0.5, 3 * std::sqrt(0.25 / n)) << agree << " of " << n;
  // The flow channel is identical; returns differ only inside flipped drift windows.
  for (int d = 0; d < cfg.num_days; ++d) EXPECT_EQ(planted->days[d].flow, twin->days[d].flow);
  std::vector<char> in_flipped(cfg.steps_per_day * cfg.num_days, 0);
  for (int64_t i = 0; i < n; ++i) {
    const PlantedEvent& t = twin->events[i];
    if (t.drift_sign == t.cue_sign) continue;
    for (int64_t s = t.cue_step + t.lag; s < t.cue_step + t.lag + cfg.horizon; ++s) {
      in_flipped[s] = 1;
    }
  }
  int64_t differing_returns = 0;
  for (int64_t s = 1; s < static_cast<int64_t>(in_flipped.size()); ++s) {
    if (s % cfg.steps_per_day == 0) continue;  // the first step of a day has no return
    const double rp = std::log(MidAt(*planted, s) / MidAt(*planted, s - 1));
    const double rt = std::log(MidAt(*twin, s) / MidAt(*twin, s - 1));
    if (std::fabs(rp - rt) > 1e-9) {
      ++differing_returns;
      ASSERT_TRUE(in_flipped[s]) << "step " << s;
      EXPECT_NEAR(std::fabs(rp - rt), 2 * cfg.drift_bps * 1e-4, 1e-9);
    }
  }
  EXPECT_EQ(differing_returns, (n - agree) * cfg.horizon);
}

TEST(PlantedCueTest, CrossDayLags) {
  PlantedCueConfig cfg;
  cfg.lags = {23400};  // longer than a session: only possible across days
  cfg.num_days = 3;
  EXPECT_EQ(GeneratePlantedCue(cfg).status().code(), absl::StatusCode::kInvalidArgument);
  cfg.lags = {20000};
  cfg.cross_day = true;
  auto d = GeneratePlantedCue(cfg);
  ASSERT_TRUE(d.ok()) << d.status();
  int crossing = 0;
  for (const PlantedEvent& e : d->events) {
    crossing += e.cue_step / cfg.steps_per_day != e.call_step / cfg.steps_per_day;
  }
  EXPECT_GT(crossing, 0);
}

TEST(PlantedCueTest, RejectsImpossibleConfigurations) {
  PlantedCueConfig cfg;
  cfg.lags = {50};  // shorter than horizon + motif
  EXPECT_EQ(GeneratePlantedCue(cfg).status().code(), absl::StatusCode::kInvalidArgument);
  cfg = PlantedCueConfig{};
  cfg.events_per_lag_per_day = 500;  // cannot fit without overlaps
  EXPECT_EQ(GeneratePlantedCue(cfg).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(DayBuilderTest, WeekdaysAndShape) {
  EXPECT_EQ(*AddWeekdays("2026-01-09", 1), "2026-01-12");  // Friday → Monday
  EXPECT_EQ(*AddWeekdays("2026-01-05", 0), "2026-01-05");
  EXPECT_FALSE(AddWeekdays("2026-01-10", 1).ok());  // a Saturday
  DaySeries s;
  s.return_bps = {5, 10, 0, -10};
  s.flow = {1, 2, 3, 4};
  s.spread_bps = {2, 2, 2, 2};
  auto days = BuildDays(s, 2, "X", "2026-01-09");
  ASSERT_TRUE(days.ok()) << days.status();
  ASSERT_EQ(days->size(), 2u);
  EXPECT_EQ((*days)[1].date, "2026-01-12");
  EXPECT_NEAR((*days)[0].mid(0), 100.0, 1e-12);  // return_bps[0] is not applied
  EXPECT_NEAR((*days)[0].mid(1), 100.0 * std::exp(10e-4), 1e-9);
  EXPECT_NEAR((*days)[1].mid(0), (*days)[0].mid(1), 1e-9);  // no overnight move
  EXPECT_NEAR(((*days)[1].ask[1] - (*days)[1].bid[1]) / (*days)[1].mid(1), 2e-4, 1e-12);
  s.flow.pop_back();
  EXPECT_FALSE(BuildDays(s, 2, "X", "2026-01-09").ok());
}

}  // namespace
}  // namespace flashtick
