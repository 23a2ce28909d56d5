// DayContext (see day_context.h).
#include "research/data/day_context.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick {

absl::StatusOr<DayContext> DayContext::Build(const std::vector<SessionGrid>& days) {
  DayContext c;
  int64_t offset = 0;
  for (size_t d = 0; d < days.size(); ++d) {
    const SessionGrid& g = days[d];
    if (g.steps() == 0 || g.ask.size() != g.bid.size() || g.flow.size() != g.bid.size()) {
      return absl::InvalidArgumentError(absl::StrCat("day context: session ", d, " (", g.date,
                                                     ") is empty or has ragged bid/ask/flow"));
    }
    if (d > 0 && !(days[d - 1].date < g.date)) {
      return absl::InvalidArgumentError(absl::StrCat("day context: dates must increase, got ",
                                                     days[d - 1].date, " then ", g.date));
    }
    std::vector<float> f = ComputeFeatures(g);
    c.features_.insert(c.features_.end(), f.begin(), f.end());
    for (int64_t t = 0; t < g.steps(); ++t) c.mids_.push_back(g.mid(t));
    c.dates_.push_back(g.date);
    c.offsets_.push_back(offset);
    c.steps_.push_back(g.steps());
    offset += g.steps();
  }
  return c;
}

absl::StatusOr<int64_t> DayContext::Window(int day, int64_t t, int64_t n, float* out) const {
  if (day < 0 || day >= num_days() || t < 0 || t >= steps_[day] || n <= 0) {
    return absl::OutOfRangeError(absl::StrCat("day context: window (day ", day, ", step ", t,
                                              ", n ", n, ") outside ", num_days(), " days"));
  }
  const int64_t end = offsets_[day] + t + 1;  // one past the last row
  const int64_t real = std::min(n, end);
  const int64_t pad = n - real;
  std::memset(out, 0, sizeof(float) * pad * kNumFeatures);
  std::memcpy(out + pad * kNumFeatures, features_.data() + (end - real) * kNumFeatures,
              sizeof(float) * real * kNumFeatures);
  return real;
}

}  // namespace flashtick
