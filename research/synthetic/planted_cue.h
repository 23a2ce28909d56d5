// Planted cue → move at lag L, and its null twin (docs/research/protocol.md,
// "Synthetic days with known answers").
// Background: a random-walk log-mid (σ per step), small Gaussian flow noise and
// a constant spread. Each event plants a 4-step motif in the flow channel only
// at steps [c, c+4): [A,0,A,0] for cue sign δ = +1, [0,A,0,A] for δ = −1 (the price
// is untouched there), and adds a drift b·δ' to the returns over [c+L, c+L+k).
// Planted: δ' = δ. Null twin: δ' is an independent fair coin from its own stream,
// so the twin has the same price noise, cues and windows, and nothing to learn.
// The event's "call" step is e = c + L − 1: the last step before the drift, whose
// DeepLOB label with horizon k sees the whole drift. A context of N steps ending
// at e is [c+L−N, c+L−1]: it holds the whole motif iff N ≥ L (so a model with
// context N can call an event of lag L iff N ≥ L; the lags sit far from the N's).
// Lags are measured on the concatenated grid (sessions end to end), so with
// cross_day a lag such as 20,000 puts the cue in an earlier session.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ticks/features.h"
#include "common/rng.h"
#include "research/synthetic/day_builder.h"

namespace flashtick {

struct PlantedCueConfig {
  int64_t steps_per_day = kSessionSeconds;
  int num_days = 1;
  std::vector<int64_t> lags = {300, 3000, 15000};
  int events_per_lag_per_day = 6;
  int64_t horizon = 100;          // k: drift length, and the label horizon to use
  double sigma_bps = 0.5;         // σ of the per-step return noise
  double drift_bps = 0.2;         // b per step: b·k = 20 bp against σ·√k = 5 bp
  double motif_amplitude = 50.0;  // A, in flow units
  double flow_noise = 2.0;        // σ of the background flow (≪ A)
  double spread_bps = 1.0;
  bool cross_day = false;  // place events on the whole grid (cues may precede the day)
  bool null_twin = false;
  uint64_t seed = 1;
};

struct PlantedEvent {
  int lag_family = 0;  // index into cfg.lags
  int64_t lag = 0;
  int64_t cue_step = 0;   // c, on the concatenated grid
  int64_t call_step = 0;  // e = c + L − 1
  int cue_sign = 0;       // δ
  int drift_sign = 0;     // δ' (= δ unless null twin)
  int key = -1;           // keyed cue only (keyed_cue.h): the key shared by cue and go
};

struct PlantedCueData {
  std::vector<SessionGrid> days;
  std::vector<PlantedEvent> events;  // sorted by call_step
};

// InvalidArgument for impossible configurations (a lag that does not fit in a
// day without cross_day, non-positive sizes); ResourceExhausted when the events
// cannot be placed without overlapping (fewer events or more days).
absl::StatusOr<PlantedCueData> GeneratePlantedCue(const PlantedCueConfig& cfg);

// The grid before any event, shared by every planted-cue variant
// (research/sweep/tagged_cue.h, go_cue.h): per step a return σ·N(0,1) then a flow
// flow_noise·N(0,1), both drawn from `rng` (which placement then continues), and a
// constant spread; num_days · steps_per_day steps.
DaySeries PlantedCueBackground(const PlantedCueConfig& cfg, Rng* rng);
// The null twin's coin: a stream seeded apart from cfg.seed's.
Rng PlantedCueTwinRng(uint64_t seed);

}  // namespace flashtick
