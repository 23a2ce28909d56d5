// GenerateKeyedCue (see keyed_cue.h). Placement is rejection sampling, day by day
// with the families interleaved, under three reservations:
//   markers  no two events share a cue or go step;
//   guards   each go's label window [g−k+1, g+k] (the mids its DeepLOB label
//            reads, research/labels/deeplob.h) holds no other event's jump (a move
//            or, with cue_sign_return_bps, a cue's sign jump), and no two label
//            windows overlap;
//   keys     same-key events are W apart in the sense of keyed_cue.h.
// Draws, in this order per try: the cue step, then once the step is free, the key
// among the free keys; once placed, δ, then δ' from the twin's stream.
#include "research/synthetic/keyed_cue.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/rng.h"
#include "research/synthetic/day_builder.h"

namespace flashtick {
namespace {

constexpr int kMaxTriesPerEvent = 20000;

struct KeyUse {
  int64_t cue, go;
};

// True when an event (cue, go) of this key would put a cue of the key inside the
// W steps ending at the other's go, or the other's cue inside its own.
bool KeyClash(const std::vector<KeyUse>& uses, int64_t cue, int64_t go, int64_t w) {
  for (const KeyUse& u : uses) {
    if (u.cue >= go - w && u.cue <= go) return true;
    if (cue >= u.go - w && cue <= u.go) return true;
  }
  return false;
}

}  // namespace

double KeySpreadRatio(int key, double step) { return 2.0 + step * key; }

absl::StatusOr<PlantedCueData> GenerateKeyedCue(const KeyedCueConfig& kc) {
  const PlantedCueConfig& c = kc.base;
  if (c.steps_per_day < 1 || c.num_days < 1 || c.horizon < 1 || c.events_per_lag_per_day < 0 ||
      !(c.sigma_bps >= 0) || !(c.spread_bps > 0) || c.lags.empty() || kc.keys < 1 ||
      !(kc.key_spread_step > 0) || kc.key_lead < 0 || kc.key_lead >= c.steps_per_day ||
      !(kc.cue_key_shift >= 0) || !std::isfinite(kc.cue_key_shift) ||
      !(kc.cue_sign_return_bps >= 0) || !std::isfinite(kc.cue_sign_return_bps)) {
    return absl::InvalidArgumentError(
        "keyed cue: need positive days, steps, horizon, spread, keys and key spread step, "
        "a key lead in [0, steps_per_day) and a finite, non-negative cue key shift and cue "
        "sign return");
  }
  std::vector<int64_t> count = kc.events_per_family;
  if (count.empty()) count.assign(c.lags.size(), c.events_per_lag_per_day);
  if (count.size() != c.lags.size()) {
    return absl::InvalidArgumentError(absl::StrCat("keyed cue: ", count.size(),
                                                   " event counts for ", c.lags.size(), " lags"));
  }
  int64_t busy = 0;  // label-window steps a day's events reserve
  for (size_t f = 0; f < c.lags.size(); ++f) {
    const int64_t lag = c.lags[f];
    // The go must be labelled (g ≤ day end − k − 1, g ≥ k − 1) and differ from the cue.
    if (lag < std::max<int64_t>(2, c.horizon) || lag + c.horizon >= c.steps_per_day ||
        count[f] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "keyed cue: lag ", c.lags[f], " must lie in [max(2, k), steps_per_day − k) = [",
          std::max<int64_t>(2, c.horizon), ", ", c.steps_per_day - c.horizon,
          ") and its event count (", count[f], ") be non-negative"));
    }
    if (kc.cue_sign_return_bps > 0 && lag <= c.horizon) {
      // The cue's sign jump would fall in its own go's label window [g − k + 1, g + k].
      return absl::InvalidArgumentError(absl::StrCat(
          "keyed cue: with the sign in a price jump every lag must exceed the horizon k = ",
          c.horizon, " (lag ", lag, ")"));
    }
    busy += count[f] * 2 * c.horizon;
  }
  if (busy > c.steps_per_day) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keyed cue: the events' label windows reserve ", busy, " steps a day (2k per event) but "
        "a day has ", c.steps_per_day, "; use fewer events or longer days"));
  }
  const int64_t w = kc.key_window > 0 ? kc.key_window
                                      : *std::max_element(c.lags.begin(), c.lags.end());
  const int64_t total = c.steps_per_day * c.num_days;
  const double jump = c.drift_bps * static_cast<double>(c.horizon);  // b·k in one step
  Rng rng(c.seed);
  Rng twin = PlantedCueTwinRng(c.seed);
  DaySeries s = PlantedCueBackground(c, &rng);
  const bool sign_in_return = kc.cue_sign_return_bps > 0;
  // guard: steps inside some go's label window; sign_jump: cue steps that hold a jump.
  std::vector<char> marker(total, 0), guard(total, 0), sign_jump(total, 0);
  std::vector<std::vector<KeyUse>> uses(kc.keys);
  std::vector<int> free_keys;
  PlantedCueData out;
  const int64_t most = *std::max_element(count.begin(), count.end());
  for (int day = 0; day < c.num_days; ++day) {
    const int64_t day_start = static_cast<int64_t>(day) * c.steps_per_day;
    for (int64_t e = 0; e < most; ++e) {
      for (size_t f = 0; f < c.lags.size(); ++f) {
        if (e >= count[f]) continue;
        const int64_t lag = c.lags[f];
        // go = cue + lag − 1 ∈ [k − 1, steps − k − 1] within the day.
        // The cue's key step c − key_lead stays in the day too.
        const int64_t lo = std::max<int64_t>(kc.key_lead, c.horizon - lag);
        const int64_t hi = c.steps_per_day - c.horizon - lag;
        if (lo > hi) {
          return absl::InvalidArgumentError(absl::StrCat(
              "keyed cue: lag ", lag, " with key lead ", kc.key_lead, " and horizon ", c.horizon,
              " leaves no cue step in a day of ", c.steps_per_day));
        }
        bool placed = false;
        for (int tries = 0; tries < kMaxTriesPerEvent && !placed; ++tries) {
          const int64_t cue = day_start + lo + static_cast<int64_t>(rng.Below(hi - lo + 1));
          const int64_t go = cue + lag - 1, key_step = cue - kc.key_lead;
          if (marker[cue] || marker[go] || marker[key_step]) continue;
          bool clash = false;
          for (int64_t u = go - c.horizon + 1; u <= go + c.horizon && !clash; ++u) {
            clash = guard[u] != 0 || sign_jump[u] != 0;
          }
          // The cue's own sign jump stays out of every label window, its own included.
          if (sign_in_return) clash = clash || guard[cue];
          if (clash) continue;
          free_keys.clear();
          for (int k = 0; k < kc.keys; ++k) {
            if (!KeyClash(uses[k], key_step, go, w)) free_keys.push_back(k);
          }
          if (free_keys.empty()) continue;
          const int key = free_keys[rng.Below(free_keys.size())];
          marker[cue] = marker[go] = marker[key_step] = 1;
          for (int64_t u = go - c.horizon + 1; u <= go + c.horizon; ++u) guard[u] = 1;
          uses[key].push_back({key_step, go});
          PlantedEvent ev;
          ev.lag_family = static_cast<int>(f);
          ev.lag = lag;
          ev.cue_step = cue;
          ev.call_step = go;
          ev.key = key;
          ev.cue_sign = rng.Sign();
          ev.drift_sign = c.null_twin ? twin.Sign() : ev.cue_sign;
          const double spread = KeySpreadRatio(key, kc.key_spread_step) * c.spread_bps;
          s.spread_bps[key_step] = spread + kc.cue_key_shift * c.spread_bps;
          s.spread_bps[go] = spread;
          if (sign_in_return) {
            sign_jump[cue] = 1;
            s.flow[cue] = c.motif_amplitude;
            s.return_bps[cue] += ev.cue_sign * kc.cue_sign_return_bps;
          } else {
            s.flow[cue] = ev.cue_sign * c.motif_amplitude;
          }
          s.return_bps[go + 1] += jump * ev.drift_sign;
          out.events.push_back(ev);
          placed = true;
        }
        if (!placed) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "keyed cue: cannot place ", count[f], " events of lag ", lag, " a day with ",
              kc.keys, " keys unique within ", w, " steps; use fewer events, more keys, or a "
              "shorter key window"));
        }
      }
    }
  }
  std::sort(out.events.begin(), out.events.end(),
            [](const PlantedEvent& a, const PlantedEvent& b) { return a.call_step < b.call_step; });
  ASSIGN_OR_RETURN(out.days, BuildDays(s, c.steps_per_day, c.null_twin ? "NULLKEY" : "KEYCUE",
                                       "2026-01-05"));
  return out;
}

}  // namespace flashtick
