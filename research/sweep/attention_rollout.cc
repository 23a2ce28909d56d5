// AttentionRollout (see attention_rollout.h).
#include "research/sweep/attention_rollout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

absl::StatusOr<std::vector<std::pair<int64_t, double>>> AttentionRollout(
    int layers, int64_t T, int64_t query, const AttentionRowsFn& rows,
    const RolloutOptions& options) {
  if (layers < 0 || query < 0 || query >= T || options.keep < 1) {
    return absl::InvalidArgumentError(absl::StrCat("attention rollout: query ", query,
                                                   " outside [0, ", T, ") or no layers"));
  }
  std::vector<std::pair<int64_t, double>> flow = {{query, 1.0}};
  for (int l = layers - 1; l >= 0; --l) {
    std::vector<int64_t> steps;
    for (const auto& [step, f] : flow) steps.push_back(step);
    ASSIGN_OR_RETURN(std::vector<std::vector<double>> a, rows(l, steps));
    if (a.size() != steps.size()) {
      return absl::InvalidArgumentError(absl::StrCat("attention rollout: ", a.size(),
                                                     " rows for ", steps.size(), " steps"));
    }
    // Â_l = ½·A_l + ½·I applied to the flow row vector. Dense over the T steps: every
    // softmax weight is positive, so each row touches all of its prefix anyway.
    std::vector<double> next(T, 0.0);
    int64_t last = 0;  // no step past the latest row's carries flow
    for (size_t r = 0; r < steps.size(); ++r) {
      if (static_cast<int64_t>(a[r].size()) != T) {
        return absl::InvalidArgumentError(absl::StrCat("attention rollout: a row of ",
                                                       a[r].size(), " keys, not ", T));
      }
      const double f = flow[r].second;
      next[steps[r]] += 0.5 * f;
      for (int64_t j = 0; j <= steps[r]; ++j) {
        if (a[r][j] > 0) next[j] += 0.5 * f * a[r][j];
      }
      last = std::max(last, steps[r]);
    }
    flow.clear();
    for (int64_t j = 0; j <= last; ++j) {
      if (next[j] > 0 && next[j] >= options.floor) flow.emplace_back(j, next[j]);
    }
    if (flow.size() > static_cast<size_t>(options.keep)) {  // the most flow, then by step
      std::partial_sort(flow.begin(), flow.begin() + options.keep, flow.end(),
                        [](const auto& x, const auto& y) { return x.second > y.second; });
      flow.resize(options.keep);
      std::sort(flow.begin(), flow.end());
    }
  }
  return flow;
}

}  // namespace flashtick
