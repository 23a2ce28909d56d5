// Planted cue with a go marker: a variant of the planted-cue days
// (docs/research/protocol.md says which presets use which generator;
// research/synthetic/planted_cue.h keeps the original one).
//   event of family f (lag L_f) at step c:
//     cue      flow[c], flow[c+1] = δ·A        a buy (δ=+1) or sell (δ=−1) burst
//     go       spread[c+L−1] = (3 + 2f) · spread   a widening that names the family
//                                                  and carries no direction
//     move     return[t] += b·δ' for t ∈ [c+L, c+L+k)   (δ' = δ; null twin: a coin)
// Events of all families interleave at random (a model reads the burst at the
// family's offset, L_f − 1 steps before the go marker); no two events share a
// burst or go step and no move touches another event's label window.
// Why a variant: in planted_cue the sign is the motif's phase ([A,0,A,0] vs
// [0,A,0,A]) and the timing is the lag alone, so a model must learn an attention
// peak at exactly L−1 steps back; a two-layer width-32 model trained for a minute
// per arm on 2 CPU cores learns neither lag 96 nor 320 that way (a 16-configuration
// grid on 16 cores: call-step accuracy 0.2–0.5 at every lag). Here the go marker
// gives the timing and the family locally and the burst's sign is content, so a
// context of N can call an event of lag L exactly when N ≥ L (the burst is inside
// the window): the question the sweep asks is unchanged, and a small model learns
// it in minutes.
#pragma once

#include "absl/status/statusor.h"
#include "research/synthetic/planted_cue.h"

namespace flashtick {

// Uses cfg's days, steps, lags, horizon (k), sigma_bps, drift_bps (b),
// motif_amplitude (A), flow_noise, spread_bps, seed and null_twin. A day holds
// events_per_family[f] events of family f (empty: cfg.events_per_lag_per_day each);
// InvalidArgument when the reservations cannot fit (Σ_f n_f·(2k + 2) > steps);
// ResourceExhausted when random placement cannot find room for an event.
absl::StatusOr<PlantedCueData> GenerateGoCue(const PlantedCueConfig& cfg,
                                             const std::vector<int64_t>& events_per_family = {});

}  // namespace flashtick
