// Named sweep configurations (`flashtick sweep submit --preset NAME`):
//   demo         the README's CPU demo: a tiny model on short planted-signal days,
//                Ns and lags scaled down (N ∈ {16, 32, 64}) so three arms train
//                walk-forward in minutes on two cores; the long arm should pass
//   demo_null    the same on the null twin (drift sign independent of the cue);
//                every arm should fail
//   planted      the full-scale sweep of RESEARCH.md for a GPU: N ∈ {512, 4,096,
//                32,768} on 23,400-step planted days (go-marker generator,
//                train/sweep/go_cue.h) with lags 300 / 3,000 / 15,000
//   planted_null its null twin
//   planted_small, planted_small_null
//                the same sweep with every length in steps divided by 64 (days of
//                366 steps, N ∈ {16, 64, 512}): the CPU check that the GPU sweep's
//                design is learnable (docs/sweeps/planted_small.md)
// Each preset is JSON text that ParseSweepConfig accepts, so the CLI can print it,
// a user can edit it, and the server stores exactly what ran.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

std::vector<std::string> SweepPresetNames();
// NotFound naming the presets that exist.
absl::StatusOr<std::string> SweepPresetJson(const std::string& name);

}  // namespace flashtick
