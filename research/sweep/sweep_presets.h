// Named sweep configurations (`flashtick sweep submit --preset NAME`):
//   demo         the README's CPU demo and CI's twin of `planted`: keyed-cue days
//                (research/synthetic/keyed_cue.h), Ns and lags scaled down (N ∈ {16,
//                32, 64}, lags 10 / 24 / 48) so three arms train walk-forward in
//                minutes on two cores; the long arm should pass
//   demo_null    the same on the null twin (move sign independent of the cue);
//                every arm should fail
//   planted      the full-scale sweep for one GPU: N ∈ {512, 4,096, 32,768} × 3
//                seeds on 23,400-step keyed-cue days with lags 200 / 2,000 / 10,000,
//                keys a whole spread apart, four layers (docs/sweeps/keyed.md: the
//                H200 runs; run 11 passed with lag 400 in place of 200)
//   planted_null its null twin
//   demo_go, demo_go_null, planted_go, planted_go_null, planted_small(_null)
//                the same sweeps on the earlier go-marker generator
//                (research/sweep/go_cue.h), kept for comparison: a model must count
//                L − 1 steps back, learned only up to L ≈ 40
//                (docs/sweeps/planted_small.md)
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
