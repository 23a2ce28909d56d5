// SweepData: the sessions a sweep trains and tests on, built from its
// configuration: one of the synthetic generators of docs/research/protocol.md (deterministic
// from the seed) or CSV files read, cleaned (with counts of what was dropped) and
// resampled onto the session grid. For the planted-cue generators the planted
// events come along, so the report can score each lag family's events per arm
// (an arm whose context reaches the cues of j of three families can call those and
// only guess the others: its accuracy per family tends to 1 for the j it sees and
// ½ for the rest; docs/research/sweeps.md, "The presets and their generators").
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ticks/cleaning.h"
#include "ticks/features.h"
#include "research/sweep/sweep_config.h"
#include "research/synthetic/planted_cue.h"

namespace flashtick {

struct SweepData {
  std::vector<SessionGrid> days;
  std::vector<PlantedEvent> events;  // planted_cue(_null) only, sorted by call step
  std::vector<int64_t> lags;         // the lag of each family (planted only)
  std::string description;           // one line for the report
  CleaningReport cleaning;           // CSV only
  int64_t sessions_skipped = 0;      // CSV: dates with too few rows in the window
};

// Reads files (CSV) or generates (synthetic). Errors name the file or the
// generator parameter at fault.
absl::StatusOr<SweepData> LoadSweepData(const SweepConfig& config);

}  // namespace flashtick
