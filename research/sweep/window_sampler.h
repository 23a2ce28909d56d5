// WindowSampler: training batches for one fold of one arm. A batch is B windows of
// N consecutive steps on the concatenated session grid (contexts cross the night,
// research/data/day_context.h), each ending at a training sample drawn uniformly from
// the fold's (purged) training samples. Loss is taken at every position of a window
// that is itself a training sample of the fold, so no purged, embargoed or test
// step ever carries a label; steps before the first session are zero rows with no
// label. The draw of step s of fold f is a pure function of (seed, N, f, s): a
// resumed arm sees exactly the batches it would have seen.
#pragma once

#include <cstdint>
#include <vector>

#include "research/split/walk_forward.h"

namespace flashtick {

// The context curriculum of a first fold (sweep_config.h, context_warmup_steps): the
// window grows from `start` to N over `warmup` steps, following
//   g(s) = start · (N / start)^(s / warmup)
// in halvings of N: the window is the shortest N / 2^j (an integer) that is ≥ g(s),
// so it divides N, the batch B·N / window stays whole and the tokens per step stay
// B·N. The go step of a keyed event first learns its key match among the few cues of a
// short window, then keeps it as the window fills with more (docs/sweeps/keyed.md).
// warmup = 0, start ≥ N or s ≥ warmup: N.
int64_t CurriculumWindow(int64_t n, int64_t start, int64_t warmup, int64_t step);

class WindowSampler {
 public:
  // features: normalised [total_steps, F] of the whole grid; day_offsets: global
  // step of each day's first step; fold_labels[day][t]: the fold's classes
  // (research/split/research_dataset.h FoldLabels::classes; empty rows = no label).
  WindowSampler(const std::vector<float>* features, int num_features,
                const std::vector<int64_t>& day_offsets, const Fold& fold,
                const std::vector<std::vector<int8_t>>& fold_labels, int64_t context);

  int64_t train_samples() const { return total_; }

  // Fills ticks [B, N, F] and labels [B, N] for step `fold_step` of fold `fold_index`.
  // window ∈ [1, N] (0: N): windows of that many steps instead of N, ending at the
  // same drawn samples (ticks [B, window, F]): the context curriculum
  // (CurriculumWindow). Shorter windows, not zero-padded long ones: padding rows
  // would still be keys every query attends to.
  // starts (optional): the global step of each window's first row (may be < 0 before
  // the first session), so a caller can find which rows are which steps of the grid.
  void Batch(uint64_t seed, int fold_index, int64_t fold_step, int64_t batch,
             std::vector<float>* ticks, std::vector<int32_t>* labels,
             int64_t window = 0, std::vector<int64_t>* starts = nullptr) const;

 private:
  int64_t GlobalOfSample(int64_t i) const;  // i-th training sample → global step

  const std::vector<float>* features_;
  int num_features_;
  int64_t context_;
  std::vector<int64_t> range_start_;   // global step of each training range's first sample
  std::vector<int64_t> range_cumsum_;  // samples before each range
  int64_t total_ = 0;
  std::vector<int8_t> labels_;         // global: class of every training sample, else −1
};

}  // namespace flashtick
