// GenerateTaggedCue (see tagged_cue.h). Placement follows planted_cue.cc: each
// event reserves its motif [c, c+4) and its drift guard [c+L−k, c+L+k), and no two
// reservations of any families overlap, so every motif keeps its exact zeros and
// every drift is alone in its label window.
#include "train/sweep/tagged_cue.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "train/rng.h"
#include "train/synthetic/day_builder.h"

namespace flashtick {
namespace {

constexpr int kMotifSteps = 4;
constexpr int kMaxTriesPerEvent = 10000;

struct Interval {
  int64_t lo, hi;  // [lo, hi)
  bool Overlaps(const Interval& o) const { return lo < o.hi && o.lo < hi; }
};

}  // namespace

absl::StatusOr<PlantedCueData> GenerateTaggedCue(const PlantedCueConfig& c, double tag_ratio) {
  const int64_t total = c.steps_per_day * c.num_days;
  if (c.steps_per_day < 1 || c.num_days < 1 || c.horizon < 1 || c.events_per_lag_per_day < 0 ||
      !(c.sigma_bps >= 0) || !(c.spread_bps > 0) || c.lags.empty() || !(tag_ratio > 0)) {
    return absl::InvalidArgumentError(
        "tagged cue: need positive days, steps, horizon, spread and tag ratio");
  }
  for (int64_t lag : c.lags) {
    if (lag < c.horizon + kMotifSteps) {
      return absl::InvalidArgumentError(
          absl::StrCat("tagged cue: lag ", lag, " must exceed horizon + 4"));
    }
    if (!c.cross_day && lag + c.horizon >= c.steps_per_day) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tagged cue: lag ", lag, " does not fit in a day of ", c.steps_per_day, " steps"));
    }
  }
  Rng rng(c.seed);
  Rng twin = PlantedCueTwinRng(c.seed);
  DaySeries s = PlantedCueBackground(c, &rng);
  PlantedCueData out;
  std::vector<Interval> used;
  std::vector<double> amplitude;
  const int64_t per_family = static_cast<int64_t>(c.events_per_lag_per_day) * c.num_days;
  // Interleave the families so none is starved of room by the ones placed before it.
  for (int64_t e = 0; e < per_family; ++e) {
    for (size_t f = 0; f < c.lags.size(); ++f) {
      const int64_t lag = c.lags[f];
      int64_t lo = 0, hi = total - lag - c.horizon;
      if (!c.cross_day) {
        lo = (e % c.num_days) * c.steps_per_day;
        hi = lo + c.steps_per_day - lag - c.horizon;
      }
      bool placed = false;
      for (int tries = 0; tries < kMaxTriesPerEvent && !placed; ++tries) {
        const int64_t cue = lo + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(hi - lo + 1)));
        const Interval motif{cue, cue + kMotifSteps};
        const Interval guard{cue + lag - c.horizon, cue + lag + c.horizon};
        bool clash = false;
        for (const Interval& u : used) clash |= u.Overlaps(motif) || u.Overlaps(guard);
        if (clash) continue;
        used.push_back(motif);
        used.push_back(guard);
        PlantedEvent ev;
        ev.lag_family = static_cast<int>(f);
        ev.lag = lag;
        ev.cue_step = cue;
        ev.call_step = cue + lag - 1;
        ev.cue_sign = rng.Sign();
        ev.drift_sign = c.null_twin ? twin.Sign() : ev.cue_sign;
        out.events.push_back(ev);
        amplitude.push_back(c.motif_amplitude * std::pow(tag_ratio, static_cast<double>(f)));
        placed = true;
      }
      if (!placed) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "tagged cue: cannot place ", per_family, " events per family in ", total,
            " steps without overlap; use fewer events per day or more days"));
      }
    }
  }
  for (size_t i = 0; i < out.events.size(); ++i) {
    const PlantedEvent& ev = out.events[i];
    for (int j = 0; j < kMotifSteps; ++j) {
      const bool on = (j % 2 == 0) == (ev.cue_sign > 0);  // [A,0,A,0] or [0,A,0,A]
      s.flow[ev.cue_step + j] = on ? amplitude[i] : 0.0;
    }
    for (int64_t t = ev.cue_step + ev.lag; t < ev.cue_step + ev.lag + c.horizon; ++t) {
      s.return_bps[t] += c.drift_bps * ev.drift_sign;
    }
  }
  std::sort(out.events.begin(), out.events.end(),
            [](const PlantedEvent& a, const PlantedEvent& b) { return a.call_step < b.call_step; });
  ASSIGN_OR_RETURN(out.days, BuildDays(s, c.steps_per_day, c.null_twin ? "NULLTAG" : "TAGCUE",
                                       "2026-01-05"));
  return out;
}

}  // namespace flashtick
