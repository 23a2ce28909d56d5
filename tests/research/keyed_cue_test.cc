// The keyed-cue generator (research/synthetic/keyed_cue.h): what each event plants, the
// key-uniqueness rule every window relies on (checked by brute force over all pairs),
// the label windows kept clear, the null twin, determinism and the capacity errors.
#include "research/synthetic/keyed_cue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "research/labels/deeplob.h"

namespace flashtick {
namespace {

KeyedCueConfig SmallConfig(bool null_twin = false) {
  KeyedCueConfig c;
  c.base.steps_per_day = 1024;
  c.base.num_days = 6;
  c.base.lags = {10, 60, 300};
  c.base.horizon = 4;
  c.base.sigma_bps = 0.5;
  c.base.drift_bps = 2.0;
  c.base.seed = 5;
  c.base.null_twin = null_twin;
  c.events_per_family = {6, 6, 6};
  c.keys = 16;
  c.key_window = 512;
  return c;
}

// Per step the log-return in bp, from consecutive mids of the concatenated days.
std::vector<double> ReturnsBps(const PlantedCueData& d) {
  std::vector<double> mids, r;
  for (const SessionGrid& g : d.days) {
    for (int64_t t = 0; t < g.steps(); ++t) mids.push_back(g.mid(t));
  }
  r.assign(mids.size(), 0.0);
  for (size_t t = 1; t < mids.size(); ++t) r[t] = std::log(mids[t] / mids[t - 1]) * 1e4;
  return r;
}

double SpreadRatio(const PlantedCueData& d, int64_t step, int64_t steps_per_day) {
  const SessionGrid& g = d.days[step / steps_per_day];
  const int64_t t = step % steps_per_day;
  return (g.ask[t] - g.bid[t]) / g.mid(t) * 1e4;  // spread_bps is 1
}

TEST(KeyedCue, EachEventPlantsKeySignAndOneJump) {
  const KeyedCueConfig c = SmallConfig();
  auto d = GenerateKeyedCue(c);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->events.size(), 6u * 3 * 6);
  const std::vector<double> r = ReturnsBps(*d);
  std::map<int, int> per_family;
  for (const PlantedEvent& e : d->events) {
    ++per_family[e.lag_family];
    EXPECT_EQ(e.call_step, e.cue_step + e.lag - 1);
    EXPECT_EQ(e.cue_step / c.base.steps_per_day, e.call_step / c.base.steps_per_day)
        << "cue and go share a day";
    ASSERT_GE(e.key, 0);
    ASSERT_LT(e.key, c.keys);
    EXPECT_EQ(e.drift_sign, e.cue_sign);
    const double want = KeySpreadRatio(e.key, c.key_spread_step);
    EXPECT_NEAR(SpreadRatio(*d, e.cue_step, c.base.steps_per_day), want, 1e-6);
    EXPECT_NEAR(SpreadRatio(*d, e.call_step, c.base.steps_per_day), want, 1e-6);
    const SessionGrid& g = d->days[e.cue_step / c.base.steps_per_day];
    EXPECT_EQ(g.flow[e.cue_step % c.base.steps_per_day], e.cue_sign * c.base.motif_amplitude);
    // The jump b·k lands at go + 1, over σ-sized noise.
    EXPECT_GT(r[e.call_step + 1] * e.drift_sign, c.base.drift_bps * c.base.horizon - 3.0);
    // The go's label is the move: up for δ' = +1 with α = 3 bp.
    const int64_t day = e.call_step / c.base.steps_per_day;
    std::vector<double> mids;
    for (int64_t t = 0; t < d->days[day].steps(); ++t) mids.push_back(d->days[day].mid(t));
    auto l = LabelReturns(mids, c.base.horizon);
    ASSERT_TRUE(l.ok());
    const double lt = (*l)[e.call_step % c.base.steps_per_day];
    EXPECT_GT(lt * e.drift_sign, 3e-4) << "the go's label sees the whole jump";
  }
  EXPECT_EQ(per_family.size(), 3u);
}

// key_lead = 1 (keyed_cue.h): the cue's key one step before its sign, so no step holds
// both a key and a sign and the go step matches only the step before the sign.
TEST(KeyedCue, KeyLeadPutsTheKeyBeforeTheSign) {
  KeyedCueConfig c = SmallConfig();
  c.key_lead = 1;
  auto d = GenerateKeyedCue(c);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->events.size(), 6u * 3 * 6);
  const int64_t spd = c.base.steps_per_day;
  for (const PlantedEvent& e : d->events) {
    EXPECT_EQ(e.call_step, e.cue_step + e.lag - 1);
    EXPECT_EQ((e.cue_step - 1) / spd, e.call_step / spd) << "key, cue and go share a day";
    const double key = KeySpreadRatio(e.key, c.key_spread_step);
    EXPECT_NEAR(SpreadRatio(*d, e.cue_step - 1, spd), key, 1e-6) << "the key leads the sign";
    EXPECT_NEAR(SpreadRatio(*d, e.call_step, spd), key, 1e-6);
    EXPECT_NEAR(SpreadRatio(*d, e.cue_step, spd), 1.0, 1e-6) << "the sign step has no key";
    const SessionGrid& g = d->days[e.cue_step / spd];
    EXPECT_EQ(g.flow[e.cue_step % spd], e.cue_sign * c.base.motif_amplitude);
  }
  // Keys stay unique within the key window, counted from the key step.
  for (const PlantedEvent& a : d->events) {
    for (const PlantedEvent& b : d->events) {
      if (&a == &b || a.key != b.key) continue;
      const int64_t key_step = b.cue_step - 1;
      EXPECT_FALSE(key_step >= a.call_step - c.key_window && key_step <= a.call_step)
          << "key " << a.key << " twice in the window of the go at " << a.call_step;
    }
  }
  c.key_lead = -1;
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
  c.key_lead = spd;
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
}

// cue_key_shift (keyed_cue.h): the cue's key level sits a fixed number of spreads above
// its go's, so with a shift past the key range no go step carries any cue's level.
TEST(KeyedCue, CueKeyShiftMovesOnlyTheCueLevel) {
  KeyedCueConfig c = SmallConfig();
  c.cue_key_shift = c.key_spread_step * c.keys;  // just past the key range
  auto d = GenerateKeyedCue(c);
  ASSERT_TRUE(d.ok()) << d.status();
  auto plain = GenerateKeyedCue(SmallConfig());
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(d->events.size(), plain->events.size());
  const int64_t spd = c.base.steps_per_day;
  std::set<long> cue_levels, go_levels;
  for (size_t i = 0; i < d->events.size(); ++i) {
    const PlantedEvent& e = d->events[i];
    EXPECT_EQ(e.cue_step, plain->events[i].cue_step) << "the shift moves no event";
    EXPECT_EQ(e.key, plain->events[i].key);
    const double key = KeySpreadRatio(e.key, c.key_spread_step);
    EXPECT_NEAR(SpreadRatio(*d, e.cue_step, spd), key + c.cue_key_shift, 1e-6);
    EXPECT_NEAR(SpreadRatio(*d, e.call_step, spd), key, 1e-6) << "the go keeps the plain level";
    cue_levels.insert(std::lround(2 * SpreadRatio(*d, e.cue_step, spd)));
    go_levels.insert(std::lround(2 * SpreadRatio(*d, e.call_step, spd)));
  }
  for (long level : go_levels) EXPECT_EQ(cue_levels.count(level), 0u) << level / 2.0;
  c.cue_key_shift = -1;
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
  c.cue_key_shift = std::nan("");
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
}

// cue_sign_return_bps (keyed_cue.h): every cue is a buy burst of the same size, its sign
// a price jump at the cue step, and no jump lands in any go's label window, so every
// call's label is still its move alone.
TEST(KeyedCue, SignInReturnMakesTheBurstSignFree) {
  KeyedCueConfig c = SmallConfig();
  c.cue_sign_return_bps = 10.0;  // 20 σ, so the jump's sign reads off one return
  auto d = GenerateKeyedCue(c);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->events.size(), 6u * 3 * 6);
  const std::vector<double> r = ReturnsBps(*d);
  const int64_t spd = c.base.steps_per_day;
  int up = 0;
  for (const PlantedEvent& e : d->events) {
    const SessionGrid& g = d->days[e.cue_step / spd];
    EXPECT_EQ(g.flow[e.cue_step % spd], c.base.motif_amplitude) << "a buy burst at every cue";
    EXPECT_NEAR(SpreadRatio(*d, e.cue_step, spd), KeySpreadRatio(e.key, c.key_spread_step), 1e-6);
    EXPECT_GT(r[e.cue_step] * e.cue_sign, c.cue_sign_return_bps - 3.0) << "the sign is the jump's";
    EXPECT_EQ(e.drift_sign, e.cue_sign);
    up += e.cue_sign > 0;
    // No cue jump inside any go's label window [g − k + 1, g + k].
    for (const PlantedEvent& o : d->events) {
      EXPECT_FALSE(e.cue_step >= o.call_step - c.base.horizon + 1 &&
                   e.cue_step <= o.call_step + c.base.horizon)
          << "cue at " << e.cue_step << " in the label window of the go at " << o.call_step;
    }
    const int64_t day = e.call_step / spd;
    std::vector<double> mids;
    for (int64_t t = 0; t < d->days[day].steps(); ++t) mids.push_back(d->days[day].mid(t));
    auto l = LabelReturns(mids, c.base.horizon);
    ASSERT_TRUE(l.ok());
    EXPECT_GT((*l)[e.call_step % spd] * e.drift_sign, 3e-4) << "the go's label is its move";
  }
  EXPECT_GT(up, 0);
  EXPECT_LT(up, static_cast<int>(d->events.size())) << "both signs occur";
  // The null twin keeps the cue's jump and burst; only the move's sign is a coin.
  KeyedCueConfig n = c;
  n.base.null_twin = true;
  auto nd = GenerateKeyedCue(n);
  ASSERT_TRUE(nd.ok()) << nd.status();
  ASSERT_EQ(nd->events.size(), d->events.size());
  const std::vector<double> nr = ReturnsBps(*nd);
  int agree = 0;
  for (size_t i = 0; i < nd->events.size(); ++i) {
    const PlantedEvent& e = nd->events[i];
    EXPECT_EQ(e.cue_step, d->events[i].cue_step);
    EXPECT_GT(nr[e.cue_step] * e.cue_sign, c.cue_sign_return_bps - 3.0);
    agree += e.drift_sign == e.cue_sign;
  }
  EXPECT_GT(agree, 0);
  EXPECT_LT(agree, static_cast<int>(nd->events.size()));
  c.cue_sign_return_bps = -1;
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
  c.cue_sign_return_bps = 1;
  c.base.lags = {4, 60, 300};  // lag = k: the jump would sit in its own go's window
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KeyedCue, NoWindowHoldsAnotherCueOfTheSameKey) {
  const KeyedCueConfig c = SmallConfig();
  auto d = GenerateKeyedCue(c);
  ASSERT_TRUE(d.ok()) << d.status();
  int same_key_pairs = 0;
  for (const PlantedEvent& a : d->events) {
    for (const PlantedEvent& b : d->events) {
      if (&a == &b) continue;
      EXPECT_NE(a.cue_step, b.cue_step);
      EXPECT_NE(a.call_step, b.call_step);
      EXPECT_NE(a.cue_step, b.call_step);
      // Label windows [g−k+1, g+k] are disjoint, so no jump lands in another's label.
      EXPECT_TRUE(std::abs(a.call_step - b.call_step) >= 2 * c.base.horizon);
      if (a.key != b.key) continue;
      ++same_key_pairs;
      const bool inside = b.cue_step >= a.call_step - c.key_window && b.cue_step <= a.call_step;
      EXPECT_FALSE(inside) << "key " << a.key << ": cue at " << b.cue_step
                           << " in the window of the go at " << a.call_step;
    }
  }
  EXPECT_GT(same_key_pairs, 0) << "the test should exercise key reuse";
}

TEST(KeyedCue, NullTwinKeepsEverythingButTheMovesSign) {
  auto planted = GenerateKeyedCue(SmallConfig(false));
  auto twin = GenerateKeyedCue(SmallConfig(true));
  ASSERT_TRUE(planted.ok() && twin.ok());
  ASSERT_EQ(planted->events.size(), twin->events.size());
  int agree = 0;
  for (size_t i = 0; i < planted->events.size(); ++i) {
    const PlantedEvent& p = planted->events[i];
    const PlantedEvent& t = twin->events[i];
    EXPECT_EQ(p.cue_step, t.cue_step);
    EXPECT_EQ(p.key, t.key);
    EXPECT_EQ(p.cue_sign, t.cue_sign);
    agree += t.drift_sign == t.cue_sign;
  }
  const double n = static_cast<double>(planted->events.size());
  EXPECT_NEAR(agree / n, 0.5, 3 * std::sqrt(0.25 / n)) << "the twin's move is a coin";
}

TEST(KeyedCue, DeterministicFromTheSeed) {
  auto a = GenerateKeyedCue(SmallConfig());
  auto b = GenerateKeyedCue(SmallConfig());
  KeyedCueConfig other = SmallConfig();
  other.base.seed = 6;
  auto c = GenerateKeyedCue(other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_EQ(a->events.size(), b->events.size());
  for (size_t i = 0; i < a->events.size(); ++i) {
    EXPECT_EQ(a->events[i].cue_step, b->events[i].cue_step);
    EXPECT_EQ(a->events[i].key, b->events[i].key);
  }
  EXPECT_EQ(a->days[0].bid, b->days[0].bid);
  EXPECT_NE(a->days[0].bid, c->days[0].bid);
}

// A wider key step spaces the spread levels apart: r(κ) = 2 + step·κ at cue and go.
TEST(KeyedCue, KeySpreadStepSetsTheLevels) {
  KeyedCueConfig c = SmallConfig();
  c.key_spread_step = 1.5;
  auto d = GenerateKeyedCue(c);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_FALSE(d->events.empty());
  for (const PlantedEvent& e : d->events) {
    EXPECT_NEAR(SpreadRatio(*d, e.cue_step, c.base.steps_per_day), 2.0 + 1.5 * e.key, 1e-6);
    EXPECT_NEAR(SpreadRatio(*d, e.call_step, c.base.steps_per_day), 2.0 + 1.5 * e.key, 1e-6);
  }
  c.key_spread_step = 0;
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KeyedCue, RefusesWhatCannotFit) {
  KeyedCueConfig c = SmallConfig();
  c.base.lags = {10, 1022};  // the go could not be labelled in a day of 1,024
  c.events_per_family = {1, 1};
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
  c = SmallConfig();
  c.events_per_family = {100, 100, 100};  // 300 label windows of 8 steps > 1,024
  EXPECT_EQ(GenerateKeyedCue(c).status().code(), absl::StatusCode::kInvalidArgument);
  c = SmallConfig();
  c.keys = 1;  // one key names one event per window of 512: 18 a day cannot fit
  auto full = GenerateKeyedCue(c);
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted) << full.status();
  EXPECT_NE(full.status().message().find("keys"), std::string::npos);
}

}  // namespace
}  // namespace flashtick
