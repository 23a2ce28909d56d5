// A readable form of an arm's stop reason for the report. The arm records one entry a
// fold ("fold F <why> (s of n steps)", joined by "; ": research/sweep/arm_runner.cc),
// which for a time budget spent in the first fold repeats the same words for every
// later fold (each then runs its min_steps_per_fold). The report folds consecutive
// folds with the same words into one entry: "folds 1–19 <why> (2 of 3 steps each)".
// state.json keeps the full record; only the rendering changes.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

namespace flashtick {

// Entries that do not read "fold <number> <text>" are kept as they are, in place.
std::string CompactStopReason(absl::string_view reason);

}  // namespace flashtick
