// Cue event placement and planting (see cue_events.h).
#include "research/synthetic/cue_events.h"

namespace flashtick {

bool CueEventPlacer::Place(size_t family, int64_t e, std::vector<PlantedEvent>* events) {
  const PlantedCueConfig& c = cfg_;
  const int64_t lag = c.lags[family];
  int64_t lo = 0, hi = c.steps_per_day * c.num_days - lag - c.horizon;  // cue ∈ [lo, hi]
  if (!c.cross_day) {
    lo = (e % c.num_days) * c.steps_per_day;
    hi = lo + c.steps_per_day - lag - c.horizon;
  }
  for (int tries = 0; tries < kMaxTries; ++tries) {
    const int64_t cue = lo + static_cast<int64_t>(rng_->Below(static_cast<uint64_t>(hi - lo + 1)));
    const Interval motif{cue, cue + kCueMotifSteps};
    const Interval guard{cue + lag - c.horizon, cue + lag + c.horizon};
    bool clash = false;
    for (const Interval& u : used_) clash |= u.Overlaps(motif) || u.Overlaps(guard);
    if (clash) continue;
    used_.push_back(motif);
    used_.push_back(guard);
    PlantedEvent ev;
    ev.lag_family = static_cast<int>(family);
    ev.lag = lag;
    ev.cue_step = cue;
    ev.call_step = cue + lag - 1;
    ev.cue_sign = rng_->Sign();
    ev.drift_sign = c.null_twin ? twin_->Sign() : ev.cue_sign;
    events->push_back(ev);
    return true;
  }
  return false;
}

void PlantCueEvents(const PlantedCueConfig& cfg, const std::vector<PlantedEvent>& events,
                    const std::vector<double>& family_amplitude, DaySeries* s) {
  for (const PlantedEvent& ev : events) {
    const double amplitude = family_amplitude[ev.lag_family];
    for (int i = 0; i < kCueMotifSteps; ++i) {
      const bool on = (i % 2 == 0) == (ev.cue_sign > 0);  // [A,0,A,0] or [0,A,0,A]
      s->flow[ev.cue_step + i] = on ? amplitude : 0.0;
    }
    for (int64_t t = ev.cue_step + ev.lag; t < ev.cue_step + ev.lag + cfg.horizon; ++t) {
      s->return_bps[t] += cfg.drift_bps * ev.drift_sign;
    }
  }
}

}  // namespace flashtick
