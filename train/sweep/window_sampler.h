// WindowSampler: training batches for one fold of one arm. A batch is B windows of
// N consecutive steps on the concatenated session grid (contexts cross the night,
// train/data/day_context.h), each ending at a training sample drawn uniformly from
// the fold's (purged) training samples. Loss is taken at every position of a window
// that is itself a training sample of the fold, so no purged, embargoed or test
// step ever carries a label; steps before the first session are zero rows with no
// label. The draw of step s of fold f is a pure function of (seed, N, f, s): a
// resumed arm sees exactly the batches it would have seen.
#pragma once

#include <cstdint>
#include <vector>

#include "train/split/walk_forward.h"

namespace flashtick {

// The context curriculum of a first fold (sweep_config.h, context_warmup_steps): the
// visible context grows geometrically from `start` to N over `warmup` steps,
//   c(s) = round(start · (N / start)^(s / warmup)),  c(s) = N for s ≥ warmup,
// so the go step of a keyed event first learns its key match among the few cues of a
// short window, then keeps it as the window fills with more (docs/sweeps/keyed.md).
// warmup = 0 or start ≥ N: N throughout.
int64_t VisibleContext(int64_t n, int64_t start, int64_t warmup, int64_t step);

class WindowSampler {
 public:
  // features: normalised [total_steps, F] of the whole grid; day_offsets: global
  // step of each day's first step; fold_labels[day][t]: the fold's classes
  // (train/split/research_dataset.h FoldLabels::classes; empty rows = no label).
  WindowSampler(const std::vector<float>* features, int num_features,
                const std::vector<int64_t>& day_offsets, const Fold& fold,
                const std::vector<std::vector<int8_t>>& fold_labels, int64_t context);

  int64_t train_samples() const { return total_; }

  // Fills ticks [B, N, F] and labels [B, N] for step `fold_step` of fold `fold_index`.
  // visible ∈ [1, N] (0: N) keeps only the last `visible` rows of each window, the
  // rows before them zero and unlabelled, as if the window started later: the
  // context curriculum (VisibleContext). The draws do not depend on it.
  void Batch(uint64_t seed, int fold_index, int64_t fold_step, int64_t batch,
             std::vector<float>* ticks, std::vector<int32_t>* labels,
             int64_t visible = 0) const;

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
