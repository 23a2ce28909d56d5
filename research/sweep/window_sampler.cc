// WindowSampler (see window_sampler.h).
#include "research/sweep/window_sampler.h"

#include <algorithm>
#include <cmath>

#include "research/labels/deeplob.h"
#include "common/rng.h"

namespace flashtick {
namespace {

// SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijective mix, so distinct
// (seed, N, fold, step) tuples give well-separated generator seeds.
uint64_t Mix(uint64_t h, uint64_t v) {
  uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

int64_t CurriculumWindow(int64_t n, int64_t start, int64_t warmup, int64_t step) {
  if (warmup <= 0 || start >= n || step >= warmup) return n;
  start = std::max<int64_t>(1, start);
  const double frac = static_cast<double>(std::max<int64_t>(0, step)) / static_cast<double>(warmup);
  const double g = static_cast<double>(start) *
                   std::pow(static_cast<double>(n) / static_cast<double>(start), frac);
  int64_t w = n;
  while (w % 2 == 0 && static_cast<double>(w / 2) >= g) w /= 2;
  return w;
}

WindowSampler::WindowSampler(const std::vector<float>* features, int num_features,
                             const std::vector<int64_t>& day_offsets, const Fold& fold,
                             const std::vector<std::vector<int8_t>>& fold_labels,
                             int64_t context)
    : features_(features), num_features_(num_features), context_(context) {
  const int64_t steps = static_cast<int64_t>(features->size()) / num_features;
  labels_.assign(steps, kNoLabel);
  for (const SampleRange& r : fold.train) {
    const int64_t off = day_offsets[r.day];
    range_start_.push_back(off + r.begin);
    range_cumsum_.push_back(total_);
    total_ += r.size();
    if (r.day < static_cast<int>(fold_labels.size()) && !fold_labels[r.day].empty()) {
      const std::vector<int8_t>& c = fold_labels[r.day];
      for (int64_t t = r.begin; t < r.end; ++t) labels_[off + t] = c[t];
    }
  }
}

int64_t WindowSampler::GlobalOfSample(int64_t i) const {
  // The last range whose first sample index is ≤ i.
  const auto it = std::upper_bound(range_cumsum_.begin(), range_cumsum_.end(), i);
  const size_t r = static_cast<size_t>(it - range_cumsum_.begin()) - 1;
  return range_start_[r] + (i - range_cumsum_[r]);
}

void WindowSampler::Batch(uint64_t seed, int fold_index, int64_t fold_step, int64_t batch,
                          std::vector<float>* ticks, std::vector<int32_t>* labels,
                          int64_t window, std::vector<int64_t>* starts) const {
  const int64_t f = num_features_;
  const int64_t n = window > 0 && window < context_ ? window : context_;
  ticks->assign(static_cast<size_t>(batch * n * f), 0.0f);
  labels->assign(static_cast<size_t>(batch * n), -1);
  if (starts != nullptr) starts->assign(static_cast<size_t>(batch), 0);
  Rng rng(Mix(Mix(Mix(seed, static_cast<uint64_t>(context_)), static_cast<uint64_t>(fold_index)),
              static_cast<uint64_t>(fold_step)));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t end = GlobalOfSample(static_cast<int64_t>(rng.Below(total_)));
    const int64_t start = end - n + 1;  // may be < 0: zero rows, no labels
    if (starts != nullptr) (*starts)[b] = start;
    for (int64_t i = std::max<int64_t>(0, -start); i < n; ++i) {
      const int64_t g = start + i;
      std::copy(features_->begin() + g * f, features_->begin() + (g + 1) * f,
                ticks->begin() + (b * n + i) * f);
      (*labels)[b * n + i] = labels_[g];
    }
  }
}

}  // namespace flashtick
