// The strategy behind the Sharpe gates (docs/research/protocol.md, "Benefit and statistics"): take
// position +1 / 0 / −1 on a predicted up / flat / down and hold it for the label
// horizon k; one position at a time, no overlapping trades.
//   Walk the session: at step t with no open position, a flat (or missing)
//   prediction waits one step; an up/down prediction trades and the next
//   decision is at t + k:
//     pnl = pos·(p_{t+k} − p_t)/p_t − |pos|·cost_bps·1e−4
//   cost_bps is the stated round-trip cost (spread + fees) per unit traded.
//   Daily return = Σ of the day's trade pnl (unit capital, simple sum).
// Trades never cross the close (t + k must lie in the session), so days are
// independent observations for the Sharpe statistics (T = test days).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

struct DayPnl {
  double daily_return = 0;
  int64_t trades = 0;     // trades with a non-zero position
  int64_t decisions = 0;  // steps with a prediction while no position was open
  double gross = 0;       // before costs
};

// `mids`: the session's mids; `predicted`: per step, kDown/kFlat/kUp or kNoLabel.
absl::StatusOr<DayPnl> DailyStrategyReturn(const std::vector<double>& mids,
                                           const std::vector<int8_t>& predicted, int64_t horizon,
                                           double cost_bps);

}  // namespace flashtick
