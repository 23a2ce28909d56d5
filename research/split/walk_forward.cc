// MakeSplits (see walk_forward.h). Overlap algebra: spans [g−N+1, g+k] and
// [h−N+1, h+k] intersect iff |g − h| ≤ N + k − 1, so a union of test spans
// [a, b] forbids training samples g ∈ [a − k, b + N − 1].
#include "research/split/walk_forward.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "research/labels/deeplob.h"

namespace flashtick {
namespace {

struct Interval {
  int64_t lo, hi;  // closed [lo, hi] on global steps
};

// Subtracts the forbidden global intervals from one day's sample range; appends
// the surviving pieces and returns how many samples were removed.
int64_t Subtract(const SampleRange& r, int64_t offset, const std::vector<Interval>& forbidden,
                 std::vector<SampleRange>* out) {
  std::vector<SampleRange> pieces = {r};
  for (const Interval& f : forbidden) {
    std::vector<SampleRange> next;
    for (const SampleRange& p : pieces) {
      const int64_t lo = f.lo - offset, hi = f.hi - offset + 1;  // [lo, hi) in day steps
      if (hi <= p.begin || lo >= p.end) {
        next.push_back(p);
        continue;
      }
      if (lo > p.begin) next.push_back({p.day, p.begin, lo});
      if (hi < p.end) next.push_back({p.day, hi, p.end});
    }
    pieces.swap(next);
  }
  int64_t kept = 0;
  for (const SampleRange& p : pieces) {
    kept += p.size();
    out->push_back(p);
  }
  return r.size() - kept;
}

}  // namespace

std::string SplitModeName(SplitMode m) {
  switch (m) {
    case SplitMode::kExpanding:
      return "expanding";
    case SplitMode::kRolling:
      return "rolling";
    case SplitMode::kPurgedKFold:
      return "purged_kfold";
  }
  return "unknown";
}

absl::Status SplitConfig::Validate() const {
  if (context < 1 || horizon < 1 || train_days < 1 || test_days < 1 || embargo_days < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "splits: need context ≥ 1, horizon ≥ 1, train_days ≥ 1, test_days ≥ 1, embargo ≥ 0; got N=",
        context, " k=", horizon, " train_days=", train_days, " test_days=", test_days,
        " embargo=", embargo_days));
  }
  if (mode == SplitMode::kPurgedKFold && embargo_days < 1) {
    return absl::InvalidArgumentError(
        "splits: purged k-fold trains on days after the test block, so embargo_days must be ≥ 1");
  }
  return absl::OkStatus();
}

int64_t Fold::train_samples() const {
  int64_t n = 0;
  for (const SampleRange& r : train) n += r.size();
  return n;
}
int64_t Fold::test_samples() const {
  int64_t n = 0;
  for (const SampleRange& r : test) n += r.size();
  return n;
}

absl::StatusOr<std::vector<Fold>> MakeSplits(const SplitConfig& cfg,
                                             const std::vector<int64_t>& day_steps) {
  RETURN_IF_ERROR(cfg.Validate());
  const int days = static_cast<int>(day_steps.size());
  std::vector<int64_t> offset(days + 1, 0);
  std::vector<SampleRange> labelled(days);
  for (int d = 0; d < days; ++d) {
    if (day_steps[d] < 1) {
      return absl::InvalidArgumentError(absl::StrCat("splits: day ", d, " has no steps"));
    }
    offset[d + 1] = offset[d] + day_steps[d];
    const LabelRange r = LabelledSteps(day_steps[d], cfg.horizon);
    labelled[d] = {d, r.begin, r.end};
  }
  // Test blocks.
  std::vector<std::pair<int, int>> blocks;  // [first, last)
  if (cfg.mode == SplitMode::kPurgedKFold) {
    for (int s = 0; s < days; s += cfg.test_days)
      blocks.push_back({s, std::min(days, s + cfg.test_days)});
    if (blocks.size() < 2) {
      return absl::InvalidArgumentError("splits: purged k-fold needs at least two blocks of days");
    }
  } else {
    for (int s = cfg.train_days; s + cfg.test_days <= days; s += cfg.test_days) {
      blocks.push_back({s, s + cfg.test_days});
    }
    if (blocks.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "splits: ", days, " days leave no test block after ", cfg.train_days, " training days"));
    }
  }

  std::vector<Fold> folds;
  for (const auto& [first, last] : blocks) {
    Fold f;
    std::vector<Interval> test_spans;
    for (int d = first; d < last; ++d) {
      f.test_days.push_back(d);
      if (labelled[d].size() <= 0) continue;
      f.test.push_back(labelled[d]);
      const int64_t g0 = offset[d] + labelled[d].begin, g1 = offset[d] + labelled[d].end - 1;
      const Interval span{g0 - cfg.context + 1, g1 + cfg.horizon};
      if (!test_spans.empty() && span.lo <= test_spans.back().hi + 1) {
        test_spans.back().hi = span.hi;  // merge: consecutive days' spans touch or overlap
      } else {
        test_spans.push_back(span);
      }
    }
    // Forbidden training positions: g with [g−N+1, g+k] ∩ [a, b] ≠ ∅.
    std::vector<Interval> forbidden;
    for (const Interval& s : test_spans) {
      forbidden.push_back({s.lo - cfg.horizon, s.hi + cfg.context - 1});
    }
    int lo_day = 0, hi_day = first;  // training candidates [lo_day, hi_day) ∪ later
    if (cfg.mode == SplitMode::kRolling) lo_day = std::max(0, first - cfg.train_days);
    std::vector<int> candidates;
    for (int d = lo_day; d < hi_day; ++d) candidates.push_back(d);
    if (cfg.mode == SplitMode::kPurgedKFold) {
      for (int d = last; d < days; ++d) {
        if (d < last + cfg.embargo_days) {
          f.embargoed += std::max<int64_t>(labelled[d].size(), 0);
          continue;
        }
        candidates.push_back(d);
      }
    }
    for (int d : candidates) {
      if (labelled[d].size() <= 0) continue;
      const size_t before = f.train.size();
      f.purged += Subtract(labelled[d], offset[d], forbidden, &f.train);
      if (f.train.size() > before) f.train_days.push_back(d);
    }
    folds.push_back(std::move(f));
  }
  return folds;
}

}  // namespace flashtick
