// DailyStrategyReturn (see strategy.h).
#include "research/stats/strategy.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "research/labels/deeplob.h"

namespace flashtick {

absl::StatusOr<DayPnl> DailyStrategyReturn(const std::vector<double>& mids,
                                           const std::vector<int8_t>& predicted, int64_t horizon,
                                           double cost_bps) {
  if (mids.size() != predicted.size() || horizon < 1 || !(cost_bps >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("strategy: ", mids.size(), " mids and ",
                                                   predicted.size(), " predictions, k=", horizon,
                                                   ", cost=", cost_bps, " bp"));
  }
  DayPnl d;
  const int64_t n = static_cast<int64_t>(mids.size());
  for (int64_t t = 0; t + horizon < n;) {
    if (predicted[t] == kNoLabel) {
      ++t;
      continue;
    }
    ++d.decisions;
    const int pos = predicted[t] == kUp ? 1 : predicted[t] == kDown ? -1 : 0;
    if (pos == 0) {
      ++t;  // flat: no position, decide again at the next step
      continue;
    }
    if (!(mids[t] > 0) || !std::isfinite(mids[t + horizon])) {
      return absl::InvalidArgumentError(absl::StrCat("strategy: bad mid at step ", t));
    }
    const double gross = pos * (mids[t + horizon] - mids[t]) / mids[t];
    d.gross += gross;
    d.daily_return += gross - cost_bps * 1e-4;
    ++d.trades;
    t += horizon;  // the position is held for k steps
  }
  return d;
}

}  // namespace flashtick
