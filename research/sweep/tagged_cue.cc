// GenerateTaggedCue (see tagged_cue.h). Placement and planting are planted_cue.cc's
// (research/synthetic/cue_events.h), with the families interleaved and one motif
// amplitude per family.
#include "research/sweep/tagged_cue.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/rng.h"
#include "research/synthetic/cue_events.h"
#include "research/synthetic/day_builder.h"

namespace flashtick {

absl::StatusOr<PlantedCueData> GenerateTaggedCue(const PlantedCueConfig& c, double tag_ratio) {
  const int64_t total = c.steps_per_day * c.num_days;
  if (c.steps_per_day < 1 || c.num_days < 1 || c.horizon < 1 || c.events_per_lag_per_day < 0 ||
      !(c.sigma_bps >= 0) || !(c.spread_bps > 0) || c.lags.empty() || !(tag_ratio > 0)) {
    return absl::InvalidArgumentError(
        "tagged cue: need positive days, steps, horizon, spread and tag ratio");
  }
  for (int64_t lag : c.lags) {
    if (lag < c.horizon + kCueMotifSteps) {
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
  CueEventPlacer placer(c, &rng, &twin);
  const int64_t per_family = static_cast<int64_t>(c.events_per_lag_per_day) * c.num_days;
  // Interleave the families so none is starved of room by the ones placed before it.
  for (int64_t e = 0; e < per_family; ++e) {
    for (size_t f = 0; f < c.lags.size(); ++f) {
      if (!placer.Place(f, e, &out.events)) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "tagged cue: cannot place ", per_family, " events per family in ", total,
            " steps without overlap; use fewer events per day or more days"));
      }
    }
  }
  std::vector<double> amplitude;  // A_f = A·tag_ratio^f
  for (size_t f = 0; f < c.lags.size(); ++f) {
    amplitude.push_back(c.motif_amplitude * std::pow(tag_ratio, static_cast<double>(f)));
  }
  PlantCueEvents(c, out.events, amplitude, &s);
  std::sort(out.events.begin(), out.events.end(),
            [](const PlantedEvent& a, const PlantedEvent& b) { return a.call_step < b.call_step; });
  ASSIGN_OR_RETURN(out.days, BuildDays(s, c.steps_per_day, c.null_twin ? "NULLTAG" : "TAGCUE",
                                       "2026-01-05"));
  return out;
}

}  // namespace flashtick
