// DeepLOB labels (see deeplob.h): prefix sums give every m₋ and m₊ in O(T).
#include "research/labels/deeplob.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick {

LabelRange LabelledSteps(int64_t steps, int64_t k) {
  LabelRange r;
  if (k < 1 || steps < 2 * k) return r;
  r.begin = k - 1;
  r.end = steps - k;  // last labelled t = T−k−1, so t + k ≤ T − 1
  return r;
}

absl::StatusOr<std::vector<double>> LabelReturns(const std::vector<double>& mids, int64_t k) {
  if (k < 1) return absl::InvalidArgumentError(absl::StrCat("labels: horizon k=", k, " < 1"));
  const int64_t n = static_cast<int64_t>(mids.size());
  std::vector<double> l(n, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> prefix(n + 1, 0.0);  // prefix[i] = Σ_{j<i} p_j
  for (int64_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + mids[i];
  const LabelRange r = LabelledSteps(n, k);
  for (int64_t t = r.begin; t < r.end; ++t) {
    const double m_minus = (prefix[t + 1] - prefix[t + 1 - k]) / static_cast<double>(k);
    const double m_plus = (prefix[t + 1 + k] - prefix[t + 1]) / static_cast<double>(k);
    if (m_minus > 0 && std::isfinite(m_plus)) l[t] = (m_plus - m_minus) / m_minus;
  }
  return l;
}

std::vector<int8_t> ClassesFromReturns(const std::vector<double>& l, double alpha) {
  std::vector<int8_t> c(l.size(), kNoLabel);
  for (size_t t = 0; t < l.size(); ++t) {
    if (std::isnan(l[t])) continue;
    c[t] = l[t] > alpha ? kUp : l[t] < -alpha ? kDown : kFlat;
  }
  return c;
}

absl::StatusOr<double> ChooseBalancedAlpha(const std::vector<double>& training_l) {
  std::vector<double> mag;
  mag.reserve(training_l.size());
  for (double v : training_l) {
    if (std::isfinite(v)) mag.push_back(std::fabs(v));
  }
  if (mag.empty()) {
    return absl::InvalidArgumentError("labels: no finite l_t on the training days to choose α");
  }
  // Lower 1/3 quantile (nearest rank): α = |l|_(⌈n/3⌉); ties at α count as flat.
  const size_t rank = (mag.size() + 2) / 3 - 1;
  std::nth_element(mag.begin(), mag.begin() + rank, mag.end());
  return mag[rank];
}

}  // namespace flashtick
