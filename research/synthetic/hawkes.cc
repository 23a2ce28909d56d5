// Ogata thinning for an exponential-kernel Hawkes process (see hawkes.h).
#include "research/synthetic/hawkes.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/rng.h"
#include "research/synthetic/day_builder.h"

namespace flashtick {

absl::StatusOr<std::vector<double>> SimulateHawkes(const HawkesParams& p, double horizon,
                                                   uint64_t seed) {
  if (!(p.mu > 0) || !(p.alpha >= 0) || !(p.beta > 0) || !(p.branching() < 1) || !(horizon > 0) ||
      !std::isfinite(horizon)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hawkes: need μ > 0, α ≥ 0, β > 0, α/β < 1 (stationary) and a finite horizon > 0; got μ=",
        p.mu, " α=", p.alpha, " β=", p.beta, " horizon=", horizon));
  }
  Rng rng(seed);
  std::vector<double> times;
  double t = 0.0;
  double excitation = 0.0;  // S(t) just after the last accepted event or candidate
  for (;;) {
    const double bound = p.mu + excitation;  // λ only decays until the next event
    const double w = rng.Exponential() / bound;
    t += w;
    if (t >= horizon) break;
    excitation *= std::exp(-p.beta * w);
    if (rng.Uniform() * bound <= p.mu + excitation) {
      times.push_back(t);
      excitation += p.alpha;
    }
  }
  return times;
}

std::vector<double> HawkesCompensatorIncrements(const HawkesParams& p,
                                                const std::vector<double>& times) {
  // Between events, ∫ (μ + S e^{−β(u−t0)}) du = μ·Δ + S(1 − e^{−βΔ})/β.
  std::vector<double> out;
  out.reserve(times.size());
  double last = 0.0, excitation = 0.0;
  for (double t : times) {
    const double dt = t - last;
    const double decay = std::exp(-p.beta * dt);
    out.push_back(p.mu * dt + excitation * (1.0 - decay) / p.beta);
    excitation = excitation * decay + p.alpha;
    last = t;
  }
  return out;
}

absl::StatusOr<SessionGrid> HawkesDay(const HawkesDayConfig& c, const std::string& date) {
  if (c.steps < 1 || !(c.mean_size > 0) || !(c.spread_bps > 0)) {
    return absl::InvalidArgumentError("hawkes day: need steps ≥ 1, mean_size > 0, spread > 0");
  }
  ASSIGN_OR_RETURN(std::vector<double> times,
                   SimulateHawkes(c.process, static_cast<double>(c.steps), c.seed));
  Rng marks(c.seed ^ 0x5DEECE66DULL);  // sizes and signs: a stream apart from the times
  DaySeries s;
  s.return_bps.assign(c.steps, 0.0);
  s.flow.assign(c.steps, 0.0);
  s.spread_bps.assign(c.steps, c.spread_bps);
  for (double t : times) {
    const int64_t step = static_cast<int64_t>(t);  // the second the trade falls in
    const int sign = marks.Sign();
    const double size = c.mean_size * marks.Exponential();
    s.flow[step] += sign * size;
    // The mid moves after the trade, so the step's return includes it; the first
    // step's return is not applied (BuildDays), so trades in second 0 only add flow.
    s.return_bps[step] += sign * c.impact_bps;
  }
  ASSIGN_OR_RETURN(std::vector<SessionGrid> days, BuildDays(s, c.steps, "HAWKES", date));
  return days.front();
}

}  // namespace flashtick
