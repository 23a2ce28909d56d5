// Placing and planting cue events, shared by the planted-cue generators
// (planted_cue.cc, research/sweep/tagged_cue.cc). Placement is rejection sampling: each
// event reserves its motif [c, c+4) and its drift guard [c+L−k, c+L+k), and no two
// reservations of any family overlap, so every motif keeps its exact zeros and every
// drift is alone in its label window (the guard also keeps another drift out of the
// k mids before the call step, the m₋ of its label).
// Draws per try, in this order (a generator's data for a seed depends on it): the cue
// step from `rng`; once placed, δ from `rng`, then δ' from `twin` for the null twin.
#pragma once

#include <cstdint>
#include <vector>

#include "common/rng.h"
#include "research/synthetic/day_builder.h"
#include "research/synthetic/planted_cue.h"

namespace flashtick {

constexpr int kCueMotifSteps = 4;  // the flow motif [A,0,A,0] / [0,A,0,A]

class CueEventPlacer {
 public:
  // `cfg`, `rng` and `twin` must outlive the placer.
  CueEventPlacer(const PlantedCueConfig& cfg, Rng* rng, Rng* twin)
      : cfg_(cfg), rng_(rng), twin_(twin) {}

  // Places event `e` of lag family `family` (without cfg.cross_day, in day
  // e % num_days) clear of every event placed before, and appends it to `events`;
  // false when no free spot turned up in kMaxTries draws.
  bool Place(size_t family, int64_t e, std::vector<PlantedEvent>* events);

 private:
  static constexpr int kMaxTries = 10000;
  struct Interval {
    int64_t lo, hi;  // [lo, hi)
    bool Overlaps(const Interval& o) const { return lo < o.hi && o.lo < hi; }
  };
  const PlantedCueConfig& cfg_;
  Rng* rng_;
  Rng* twin_;
  std::vector<Interval> used_;
};

// Writes each event's motif into s->flow at [c, c+4), with amplitude
// family_amplitude[ev.lag_family], and adds its drift b·δ' to s->return_bps over
// [c+L, c+L+k).
void PlantCueEvents(const PlantedCueConfig& cfg, const std::vector<PlantedEvent>& events,
                    const std::vector<double>& family_amplitude, DaySeries* s);

}  // namespace flashtick
