// Planted-cue generator (see planted_cue.h). Events are placed by rejection
// sampling so no two events' cue or drift-guard windows overlap: the guard
// [c+L−k, c+L+k) keeps another drift out of the k mids before the call step
// (the m₋ of its label) as well as out of its own drift window.
#include "train/synthetic/planted_cue.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "train/rng.h"
#include "train/synthetic/day_builder.h"

namespace flashtick {
namespace {

constexpr int kMotifSteps = 4;
constexpr int kMaxTriesPerEvent = 10000;
constexpr uint64_t kNullStream = 0x9E3779B97F4A7C15ULL;  // seeds the twin's coin apart

struct Interval {
  int64_t lo, hi;  // [lo, hi)
  bool Overlaps(const Interval& o) const { return lo < o.hi && o.lo < hi; }
};

}  // namespace

DaySeries PlantedCueBackground(const PlantedCueConfig& c, Rng* rng) {
  const int64_t total = c.steps_per_day * c.num_days;
  DaySeries s;
  s.return_bps.resize(total);
  s.flow.resize(total);
  s.spread_bps.assign(total, c.spread_bps);
  for (int64_t t = 0; t < total; ++t) {
    s.return_bps[t] = c.sigma_bps * rng->Normal();
    s.flow[t] = c.flow_noise * rng->Normal();
  }
  return s;
}

Rng PlantedCueTwinRng(uint64_t seed) { return Rng(seed ^ kNullStream); }

absl::StatusOr<PlantedCueData> GeneratePlantedCue(const PlantedCueConfig& c) {
  const int64_t total = c.steps_per_day * c.num_days;
  if (c.steps_per_day < 1 || c.num_days < 1 || c.horizon < 1 || c.events_per_lag_per_day < 0 ||
      !(c.sigma_bps >= 0) || !(c.spread_bps > 0) || c.lags.empty()) {
    return absl::InvalidArgumentError("planted cue: need positive days, steps, horizon, spread");
  }
  for (int64_t lag : c.lags) {
    const int64_t span = lag + c.horizon;  // cue to end of drift
    if (lag < c.horizon + kMotifSteps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "planted cue: lag ", lag, " must exceed horizon + 4 = ", c.horizon + kMotifSteps,
          " so the cue lies before the label's past window"));
    }
    if (!c.cross_day && span >= c.steps_per_day) {
      return absl::InvalidArgumentError(absl::StrCat("planted cue: lag ", lag, " + horizon ",
                                                     c.horizon, " does not fit in a day of ",
                                                     c.steps_per_day, " steps; set cross_day"));
    }
    if (span >= total) {
      return absl::InvalidArgumentError(
          absl::StrCat("planted cue: lag ", lag, " does not fit in ", total, " steps"));
    }
  }

  Rng rng(c.seed);
  Rng twin = PlantedCueTwinRng(c.seed);
  DaySeries s = PlantedCueBackground(c, &rng);

  PlantedCueData out;
  std::vector<Interval> used;
  const int64_t per_family = static_cast<int64_t>(c.events_per_lag_per_day) * c.num_days;
  for (size_t f = 0; f < c.lags.size(); ++f) {
    const int64_t lag = c.lags[f];
    for (int64_t e = 0; e < per_family; ++e) {
      // Without cross_day, event e of a family lives in day e % num_days.
      int64_t lo = 0, hi = total - lag - c.horizon;  // c ∈ [lo, hi]
      if (!c.cross_day) {
        const int64_t day = e % c.num_days;
        lo = day * c.steps_per_day;
        hi = lo + c.steps_per_day - lag - c.horizon;
      }
      bool placed = false;
      for (int tries = 0; tries < kMaxTriesPerEvent && !placed; ++tries) {
        const int64_t cue =
            lo + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(hi - lo + 1)));
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
        placed = true;
      }
      if (!placed) {
        return absl::ResourceExhaustedError(
            absl::StrCat("planted cue: cannot place ", per_family, " events of lag ", lag, " in ",
                         total, " steps without overlap; use fewer events per day or more days"));
      }
    }
  }
  for (const PlantedEvent& ev : out.events) {
    for (int i = 0; i < kMotifSteps; ++i) {
      const bool on = (i % 2 == 0) == (ev.cue_sign > 0);  // [A,0,A,0] or [0,A,0,A]
      s.flow[ev.cue_step + i] = on ? c.motif_amplitude : 0.0;
    }
    for (int64_t t = ev.cue_step + ev.lag; t < ev.cue_step + ev.lag + c.horizon; ++t) {
      s.return_bps[t] += c.drift_bps * ev.drift_sign;
    }
  }
  std::sort(out.events.begin(), out.events.end(),
            [](const PlantedEvent& a, const PlantedEvent& b) { return a.call_step < b.call_step; });
  ASSIGN_OR_RETURN(out.days,
                   BuildDays(s, c.steps_per_day, c.null_twin ? "NULLCUE" : "CUE", "2026-01-05"));
  return out;
}

}  // namespace flashtick
