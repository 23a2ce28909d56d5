// DeepLOB labels (Zhang, Zohren & Roberts 2019, eq. 3–4), per session:
//   m₋(t) = (1/k) Σ_{i=0}^{k−1} p_{t−i}     (the previous k mids, p_t included)
//   m₊(t) = (1/k) Σ_{i=1}^{k}   p_{t+i}     (the next k mids)
//   l_t   = (m₊ − m₋) / m₋ ;  up if l_t > α, down if l_t < −α, else flat.
// Only steps k−1 ≤ t ≤ T−k−1 of a session are labelled: nothing is labelled
// across the close (the last k steps are dropped) nor across the open (the first
// k−1 steps have no k mids of their own session behind them).
// α is chosen on training samples only: the 1/3 quantile of |l_t|, so about a
// third of them are flat and, for symmetric moves, a third each up and down.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

enum LabelClass : int8_t { kNoLabel = -1, kDown = 0, kFlat = 1, kUp = 2 };
constexpr int kNumClasses = 3;

// First and one-past-last labelled step of a session of `steps` steps (empty
// when steps < 2k).
struct LabelRange {
  int64_t begin = 0, end = 0;
};
LabelRange LabelledSteps(int64_t steps, int64_t k);

// l_t for every step of one session; NaN outside LabelledSteps or where m₋ ≤ 0.
// InvalidArgument for k < 1.
absl::StatusOr<std::vector<double>> LabelReturns(const std::vector<double>& mids, int64_t k);

// Classes from l_t and α (NaN → kNoLabel).
std::vector<int8_t> ClassesFromReturns(const std::vector<double>& l, double alpha);

// The 1/3 quantile of |l| over the finite entries (InvalidArgument if none).
absl::StatusOr<double> ChooseBalancedAlpha(const std::vector<double>& training_l);

}  // namespace flashtick
