// Regime-switching generator and its exact forward filter (see regime.h).
#include "research/synthetic/regime.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/rng.h"
#include "research/synthetic/day_builder.h"

namespace flashtick {
namespace {

double Logit(double p) { return std::log(p / (1.0 - p)); }
double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One prediction step in log-odds: π⁻ = (1−p)π + p(1−π), done stably via π.
double Predict(double logodds, double p) {
  const double pi = Sigmoid(logodds);
  const double prior = (1.0 - p) * pi + p * (1.0 - pi);
  return Logit(prior);
}

}  // namespace

absl::StatusOr<RegimeData> GenerateRegimeDays(const RegimeConfig& c) {
  if (c.num_days < 1 || c.steps_per_day < 1 || !(c.flip_prob > 0 && c.flip_prob < 1) ||
      !(c.sigma_bps > 0) || !(c.spread_bps > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "regime: need days ≥ 1, steps ≥ 1, 0 < p < 1, σ > 0, spread > 0; got days=", c.num_days,
        " steps=", c.steps_per_day, " p=", c.flip_prob, " σ=", c.sigma_bps));
  }
  const int64_t total = c.steps_per_day * c.num_days;
  const double mu = c.mu_over_sigma * c.sigma_bps;
  RegimeData d;
  d.state.resize(total);
  d.return_bps.resize(total);
  DaySeries s;
  s.flow.assign(total, 0.0);  // the regime lives in the price only
  s.spread_bps.assign(total, c.spread_bps);
  Rng rng(c.seed);
  int state = rng.Sign();  // stationary start
  for (int64_t t = 0; t < total; ++t) {
    if (t > 0 && rng.Uniform() < c.flip_prob) state = -state;
    d.state[t] = static_cast<int8_t>(state);
    d.return_bps[t] = mu * state + c.sigma_bps * rng.Normal();
  }
  s.return_bps = d.return_bps;
  ASSIGN_OR_RETURN(d.days, BuildDays(s, c.steps_per_day, "REGIME", "2026-01-05"));
  return d;
}

double RegimePosterior(const std::vector<double>& r, int64_t t, int64_t n, const RegimeConfig& c) {
  const double mu = c.mu_over_sigma * c.sigma_bps;
  const double gain = 2.0 * mu / (c.sigma_bps * c.sigma_bps);
  const int64_t start = std::max<int64_t>(0, t - n + 1);
  double l = 0.0;  // stationary prior ½ for the state at the window's first step
  for (int64_t i = start; i <= t; ++i) {
    if (i > start) l = Predict(l, c.flip_prob);
    l += gain * r[i];
  }
  return Sigmoid(l);
}

FilterCeiling RegimeFilterCeiling(const RegimeData& d, const RegimeConfig& c, int64_t n,
                                  int64_t first, int64_t stride) {
  FilterCeiling out;
  out.context = n;
  const int64_t total = static_cast<int64_t>(d.state.size());
  int64_t hits = 0;
  double expected = 0.0;
  for (int64_t t = std::max<int64_t>(first, 0); t + 1 < total; t += std::max<int64_t>(stride, 1)) {
    const double post = RegimePosterior(d.return_bps, t, n, c);
    const double next = (1.0 - c.flip_prob) * post + c.flip_prob * (1.0 - post);
    const int call = next >= 0.5 ? 1 : -1;
    hits += call == d.state[t + 1];
    expected += std::max(next, 1.0 - next);
    ++out.evaluated;
  }
  if (out.evaluated > 0) {
    out.accuracy = static_cast<double>(hits) / out.evaluated;
    out.expected = expected / out.evaluated;
  }
  return out;
}

}  // namespace flashtick
