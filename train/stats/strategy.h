// The strategy behind the Sharpe gates (RESEARCH.md "Cost and benefit"): hold
// position +1 / 0 / −1 on a predicted up / flat / down for the label horizon k,
// then decide again — one position at a time, no overlapping trades.
//   trade at step t (a step with a prediction): pnl = pos·(p_{t+k} − p_t)/p_t
//                                                      − |pos|·cost_bps·1e−4
//   cost_bps is the stated round-trip cost (spread + fees) per unit traded.
//   Daily return = Σ of the day's trade pnl (unit capital, simple sum).
// Trades start at the first step with a prediction and then every k steps, never
// past the close (t + k must lie in the session), so days are independent.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

struct DayPnl {
  double daily_return = 0;
  int64_t trades = 0;     // trades with a non-zero position
  int64_t decisions = 0;  // decision points, including flat
  double gross = 0;       // before costs
};

// `mids`: the session's mids; `predicted`: per step, kDown/kFlat/kUp or kNoLabel.
absl::StatusOr<DayPnl> DailyStrategyReturn(const std::vector<double>& mids,
                                           const std::vector<int8_t>& predicted, int64_t horizon,
                                           double cost_bps);

}  // namespace flashtick
