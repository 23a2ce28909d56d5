// Planted-cue generator (see planted_cue.h). Events are placed by rejection
// sampling (cue_events.h) so no two events' cue or drift-guard windows overlap.
#include "research/synthetic/planted_cue.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/rng.h"
#include "research/synthetic/cue_events.h"
#include "research/synthetic/day_builder.h"

namespace flashtick {
namespace {

constexpr uint64_t kNullStream = 0x9E3779B97F4A7C15ULL;  // seeds the twin's coin apart

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
    if (lag < c.horizon + kCueMotifSteps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "planted cue: lag ", lag, " must exceed horizon + 4 = ", c.horizon + kCueMotifSteps,
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
  CueEventPlacer placer(c, &rng, &twin);
  const int64_t per_family = static_cast<int64_t>(c.events_per_lag_per_day) * c.num_days;
  for (size_t f = 0; f < c.lags.size(); ++f) {
    for (int64_t e = 0; e < per_family; ++e) {
      if (!placer.Place(f, e, &out.events)) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "planted cue: cannot place ", per_family, " events of lag ", c.lags[f], " in ",
            total, " steps without overlap; use fewer events per day or more days"));
      }
    }
  }
  PlantCueEvents(c, out.events, std::vector<double>(c.lags.size(), c.motif_amplitude), &s);
  std::sort(out.events.begin(), out.events.end(),
            [](const PlantedEvent& a, const PlantedEvent& b) { return a.call_step < b.call_step; });
  ASSIGN_OR_RETURN(out.days,
                   BuildDays(s, c.steps_per_day, c.null_twin ? "NULLCUE" : "CUE", "2026-01-05"));
  return out;
}

}  // namespace flashtick
