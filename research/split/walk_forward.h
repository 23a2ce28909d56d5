// Purged walk-forward splits at day boundaries (docs/research/protocol.md, "Walk-forward";
// López de Prado 2018, ch. 7: purging and embargo). A pure function of the
// configuration and the day lengths, so it is unit-tested without a model.
// Samples are the labelled steps of each day (labels/deeplob.h: k−1 ≤ t ≤ T−k−1).
// Sample (d, t) at global step g = offset_d + t has information span
// [g − N + 1, g + k]: its context window and its label's future mids.
//   kExpanding: test block = days [s, s+b); train on days [0, s)
//   kRolling:   the same, training on the last `train_days` days before s
//   kPurgedKFold: days cut into blocks of b; each block is tested once; train on
//               every other day, except `embargo_days` days after the block
// Purge: a training sample is dropped when its span overlaps the span of any
// test sample of the fold. Embargo: when days after a test block train, the
// first `embargo_days` of them are dropped entirely (serial correlation leaks
// back across the purge). Walk-forward modes never train on later days.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

enum class SplitMode { kExpanding, kRolling, kPurgedKFold };

struct SplitConfig {
  SplitMode mode = SplitMode::kExpanding;
  int64_t context = 512;  // N
  int64_t horizon = 100;  // k
  int train_days = 1;     // expanding: the minimum; rolling: the window
  int test_days = 1;      // b: days per test block
  int embargo_days = 1;   // ≥ 1 whenever later data trains (kPurgedKFold)
  absl::Status Validate() const;
};

// Labelled steps [begin, end) of one day.
struct SampleRange {
  int day = 0;
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

struct Fold {
  std::vector<int> test_days;      // consecutive
  std::vector<int> train_days;     // days contributing training samples (after embargo)
  std::vector<SampleRange> train;  // after purging, in day order
  std::vector<SampleRange> test;
  int64_t purged = 0;     // training samples dropped by the purge
  int64_t embargoed = 0;  // training samples dropped by the embargo
  int64_t train_samples() const;
  int64_t test_samples() const;
};

// `day_steps[d]` = number of grid steps of day d (days in time order).
absl::StatusOr<std::vector<Fold>> MakeSplits(const SplitConfig& cfg,
                                             const std::vector<int64_t>& day_steps);

std::string SplitModeName(SplitMode m);

}  // namespace flashtick
