// Hawkes order flow for realistic tick arrival times (docs/research/protocol.md,
// "Synthetic days with known answers").
// Intensity λ(t) = μ + Σ_{t_i < t} α·exp(−β(t − t_i)); branching ratio n = α/β < 1,
// stationary rate μ/(1 − n). Simulated by Ogata's thinning (Ogata 1981): between
// events λ only decays, so λ(t⁺) bounds it until the next candidate; a candidate
// at t + Exp(λ̄) is accepted with probability λ(t)/λ̄. The excitation
// S(t) = Σ α·e^{−β(t−t_i)} is carried recursively, O(1) per candidate.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ticks/features.h"

namespace flashtick {

struct HawkesParams {
  double mu = 0.5;     // baseline events per second
  double alpha = 0.6;  // jump of the intensity per event
  double beta = 1.0;   // decay rate per second
  double branching() const { return alpha / beta; }
  double stationary_rate() const { return mu / (1.0 - branching()); }
};

// Event times in [0, horizon) seconds, increasing. InvalidArgument unless
// μ > 0, α ≥ 0, β > 0, α/β < 1 and horizon > 0.
absl::StatusOr<std::vector<double>> SimulateHawkes(const HawkesParams& p, double horizon,
                                                   uint64_t seed);

// Compensator increments Λ(t_i) − Λ(t_{i−1}) (Λ(t) = ∫₀ᵗ λ); by the time-rescaling
// theorem they are iid Exp(1) exactly when the times follow the process.
std::vector<double> HawkesCompensatorIncrements(const HawkesParams& p,
                                                const std::vector<double>& times);

// A synthetic session whose trades arrive as a Hawkes process: each trade has an
// independent sign and an Exp-distributed size (mean `mean_size`) and moves the
// log-mid by sign·impact_bps; resampled to 1-second steps like real quotes.
struct HawkesDayConfig {
  HawkesParams process;
  int64_t steps = kSessionSeconds;
  double mean_size = 100.0;
  double impact_bps = 0.2;
  double spread_bps = 1.0;
  uint64_t seed = 1;
};
absl::StatusOr<SessionGrid> HawkesDay(const HawkesDayConfig& c, const std::string& date);

}  // namespace flashtick
