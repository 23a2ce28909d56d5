// GenerateGoCue (see go_cue.h).
#include "research/sweep/go_cue.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/rng.h"
#include "research/synthetic/day_builder.h"

namespace flashtick {
namespace {

constexpr int kBurstSteps = 2;
constexpr int kMaxTriesPerEvent = 10000;

// The go marker's spread, in units of the normal spread, tags the family: 3, 5, 7, ...
double GoSpreadRatio(int family) { return 3.0 + 2.0 * family; }

}  // namespace

absl::StatusOr<PlantedCueData> GenerateGoCue(const PlantedCueConfig& c,
                                             const std::vector<int64_t>& events_per_family) {
  if (c.steps_per_day < 1 || c.num_days < 1 || c.horizon < 1 || c.events_per_lag_per_day < 0 ||
      !(c.sigma_bps >= 0) || !(c.spread_bps > 0) || c.lags.empty()) {
    return absl::InvalidArgumentError("go cue: need positive days, steps, horizon and spread");
  }
  std::vector<int64_t> count = events_per_family;
  if (count.empty()) count.assign(c.lags.size(), c.events_per_lag_per_day);
  if (count.size() != c.lags.size()) {
    return absl::InvalidArgumentError(absl::StrCat("go cue: ", count.size(),
                                                   " event counts for ", c.lags.size(), " lags"));
  }
  int64_t busy = 0;  // steps a day's events reserve
  for (size_t f = 0; f < c.lags.size(); ++f) {
    if (c.lags[f] < kBurstSteps + 1 || count[f] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "go cue: lag ", c.lags[f], " must be at least 3 and its count (", count[f],
          ") non-negative"));
    }
    busy += count[f] * (2 * c.horizon + kBurstSteps);
  }
  if (busy > c.steps_per_day) {
    return absl::InvalidArgumentError(absl::StrCat(
        "go cue: the events reserve ", busy, " steps a day (2k + 2 per event) but a day has ",
        c.steps_per_day, "; use fewer events or longer days"));
  }
  const int64_t total = c.steps_per_day * c.num_days;
  Rng rng(c.seed);
  Rng twin = PlantedCueTwinRng(c.seed);
  DaySeries s = PlantedCueBackground(c, &rng);
  PlantedCueData out;
  // Random placement, interleaving freely, with reservations that keep every event
  // readable: its burst and go steps are no other event's burst or go, and no other
  // move touches its label window [c+L−k, c+L+k).
  std::vector<char> mark(total, 0), moved(total, 0);  // burst/go steps; move or guard steps
  for (int day = 0; day < c.num_days; ++day) {
    const int64_t day_start = static_cast<int64_t>(day) * c.steps_per_day;
    for (int64_t e = 0, most = *std::max_element(count.begin(), count.end()); e < most; ++e) {
      for (size_t f = 0; f < c.lags.size(); ++f) {
        if (e >= count[f]) continue;
        const int64_t lag = c.lags[f];
        const int64_t span = c.steps_per_day - lag - c.horizon;  // cue ∈ [0, span]
        bool placed = false;
        for (int tries = 0; tries < kMaxTriesPerEvent && !placed; ++tries) {
          const int64_t cue = day_start + static_cast<int64_t>(rng.Below(span + 1));
          const int64_t go = cue + lag - 1;
          bool clash = mark[go] || moved[go];
          for (int j = 0; j < kBurstSteps; ++j) clash |= mark[cue + j] != 0 || moved[cue + j] != 0;
          for (int64_t u = go + 1 - c.horizon; u < go + 1 + c.horizon && !clash; ++u) {
            clash |= moved[u] != 0 || (u > go && mark[u] != 0);
          }
          if (clash) continue;
          for (int j = 0; j < kBurstSteps; ++j) mark[cue + j] = 1;
          mark[go] = 1;
          for (int64_t u = go + 1 - c.horizon; u < go + 1 + c.horizon; ++u) moved[u] = 1;
          PlantedEvent ev;
          ev.lag_family = static_cast<int>(f);
          ev.lag = lag;
          ev.cue_step = cue;
          ev.call_step = go;
          ev.cue_sign = rng.Sign();
          ev.drift_sign = c.null_twin ? twin.Sign() : ev.cue_sign;
          for (int j = 0; j < kBurstSteps; ++j) s.flow[cue + j] = ev.cue_sign * c.motif_amplitude;
          s.spread_bps[go] = GoSpreadRatio(static_cast<int>(f)) * c.spread_bps;
          for (int64_t u = go + 1; u < go + 1 + c.horizon; ++u) {
            s.return_bps[u] += c.drift_bps * ev.drift_sign;
          }
          out.events.push_back(ev);
          placed = true;
        }
        if (!placed) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "go cue: cannot place ", count[f], " events of lag ", lag, " in a day of ",
              c.steps_per_day, " steps without collisions; use fewer events or longer days"));
        }
      }
    }
  }
  std::sort(out.events.begin(), out.events.end(),
            [](const PlantedEvent& a, const PlantedEvent& b) { return a.call_step < b.call_step; });
  ASSIGN_OR_RETURN(out.days, BuildDays(s, c.steps_per_day, c.null_twin ? "NULLGO" : "GOCUE",
                                       "2026-01-05"));
  return out;
}

}  // namespace flashtick
