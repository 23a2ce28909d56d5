// Tick features (ticks/features.h) and the simple synthetic session.
// Features are computed causally, step by step: step t uses only steps ≤ t, so the
// same function serves training and streaming inference. Non-positive or
// non-finite mids (bad input that slipped past cleaning) give 0 for the features
// that divide by the mid, rather than NaN that would poison a whole batch.
#include "ticks/features.h"

#include <algorithm>
#include <cmath>

#include "common/rng.h"

namespace flashtick {
namespace {

constexpr double kBps = 1e4;
constexpr double kTwoPi = 6.283185307179586476925286766559;

bool UsableMid(double mid) { return std::isfinite(mid) && mid > 0.0; }

}  // namespace

namespace {

// The mid at step t; a grid with fewer ask entries than bids is malformed: read
// what exists and treat the rest as a zero spread instead of overrunning.
double MidAt(const SessionGrid& day, int64_t t) {
  const double bid = day.bid[t];
  const double ask = t < static_cast<int64_t>(day.ask.size()) ? day.ask[t] : bid;
  return 0.5 * (bid + ask);
}

}  // namespace

void ComputeFeatureRow(const SessionGrid& day, int64_t t, float* row) {
  std::fill(row, row + kNumFeatures, 0.0f);
  const double bid = day.bid[t];
  const double ask = t < static_cast<int64_t>(day.ask.size()) ? day.ask[t] : bid;
  const double flow = t < static_cast<int64_t>(day.flow.size()) ? day.flow[t] : 0.0;
  const double mid = MidAt(day, t);
  // 0: log return in basis points; 0 at the first step (no previous mid in-session).
  if (t > 0) {
    const double prev_mid = MidAt(day, t - 1);
    if (UsableMid(mid) && UsableMid(prev_mid)) {
      row[0] = static_cast<float>(std::log(mid / prev_mid) * kBps);
    }
  }
  // 1: quoted spread in basis points of the mid.
  if (UsableMid(mid) && std::isfinite(ask - bid)) {
    row[1] = static_cast<float>((ask - bid) / mid * kBps);
  }
  // 2: sign(flow)·log1p(|flow|): compresses heavy-tailed volumes, keeps the sign.
  if (std::isfinite(flow)) {
    row[2] = static_cast<float>(std::copysign(std::log1p(std::fabs(flow)), flow));
  }
  // 3, 4: time of day on the unit circle, so 16:00 sits next to 09:30 of the next day.
  const double phase = kTwoPi * static_cast<double>(t) / kSessionSeconds;
  row[3] = static_cast<float>(std::sin(phase));
  row[4] = static_cast<float>(std::cos(phase));
  // 5: session start (an overnight gap lies before step 0 of every session).
  row[5] = t == 0 ? 1.0f : 0.0f;
}

std::vector<float> ComputeFeatures(const SessionGrid& day) {
  const int64_t steps = day.steps();
  std::vector<float> out(static_cast<size_t>(steps) * kNumFeatures, 0.0f);
  for (int64_t t = 0; t < steps; ++t) {
    ComputeFeatureRow(day, t, &out[static_cast<size_t>(t) * kNumFeatures]);
  }
  return out;
}

SessionGrid SimpleSyntheticDay(uint64_t seed, int64_t steps, const std::string& instrument,
                               const std::string& date) {
  // Log-mid: a random walk with 0.5 bp per-step volatility starting at 100.
  // Spread: 1 bp + a slow intraday smile (wider at the open and close) + an
  //   Ornstein–Uhlenbeck wobble, floored at 0.2 bp so bid < ask always holds.
  // Flow: signed volume, partly aligned with the step's return (buyers lift the
  //   ask), partly noise, with zero-flow seconds about a third of the time.
  constexpr double kStartMid = 100.0;
  constexpr double kReturnVolBps = 0.5;
  constexpr double kBaseSpreadBps = 1.0;
  constexpr double kSmileBps = 0.8;
  constexpr double kOuKeep = 0.995;  // AR(1) coefficient of the spread wobble
  constexpr double kOuVolBps = 0.02;
  constexpr double kMinSpreadBps = 0.2;
  constexpr double kFlowScale = 50.0;
  constexpr double kFlowQuietProb = 1.0 / 3.0;

  SessionGrid day;
  day.instrument = instrument;
  day.date = date;
  const int64_t n = std::max<int64_t>(steps, 0);
  day.bid.resize(n);
  day.ask.resize(n);
  day.flow.resize(n);

  Rng rng(seed);
  double log_mid = std::log(kStartMid);
  double wobble = 0.0;
  for (int64_t t = 0; t < n; ++t) {
    const double z = rng.Normal();
    if (t > 0) log_mid += z * kReturnVolBps / kBps;
    wobble = kOuKeep * wobble + kOuVolBps * rng.Normal();
    const double u = static_cast<double>(t) / kSessionSeconds - 0.5;  // −½ at open, ½ at close
    const double spread_bps =
        std::max(kMinSpreadBps, kBaseSpreadBps + kSmileBps * 4.0 * u * u + wobble);
    const double mid = std::exp(log_mid);
    const double half = 0.5 * spread_bps / kBps * mid;
    day.bid[t] = mid - half;
    day.ask[t] = mid + half;
    const double quiet = rng.Uniform();
    const double signal = (t > 0 ? z : 0.0) + rng.Normal();
    day.flow[t] = quiet < kFlowQuietProb ? 0.0 : std::round(kFlowScale * signal);
  }
  return day;
}

}  // namespace flashtick
