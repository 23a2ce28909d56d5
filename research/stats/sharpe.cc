// PSR and DSR (see sharpe.h).
#include "research/stats/sharpe.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

absl::StatusOr<double> ProbabilisticSharpe(double sr, double sr_star, int64_t t, double skew,
                                           double kurtosis) {
  if (t < 2)
    return absl::InvalidArgumentError(absl::StrCat("PSR: need T ≥ 2 observations, got ", t));
  if (!std::isfinite(sr) || !std::isfinite(sr_star) || !std::isfinite(skew) ||
      !std::isfinite(kurtosis)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSR: non-finite input (SR=", sr, " SR*=", sr_star, " skew=", skew,
                     " kurt=", kurtosis, "); a constant return series has no Sharpe ratio"));
  }
  const double var = 1 - skew * sr + 0.25 * (kurtosis - 1) * sr * sr;
  if (!(var > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSR: 1 − γ₃·SR + (γ₄−1)/4·SR² = ", var, " ≤ 0 (SR=", sr, ", skew=", skew,
                     "); the normal approximation does not hold for this series"));
  }
  return NormalCdf((sr - sr_star) * std::sqrt(static_cast<double>(t - 1)) / std::sqrt(var));
}

absl::StatusOr<double> ProbabilisticSharpe(const std::vector<double>& returns, double sr_star) {
  const Moments m = ComputeMoments(returns);
  return ProbabilisticSharpe(m.sharpe, sr_star, m.n, m.skew, m.kurtosis);
}

absl::StatusOr<DeflatedSharpe> DeflatedSharpeRatio(const Moments& m, int64_t trials,
                                                   double trials_var, EmaxMethod method) {
  if (trials < 1 || !(trials_var >= 0) || !std::isfinite(trials_var)) {
    return absl::InvalidArgumentError(
        absl::StrCat("DSR: need N ≥ 1 trials and V ≥ 0, got N=", trials, " V=", trials_var));
  }
  DeflatedSharpe d;
  d.sharpe = m.sharpe;
  d.trials = trials;
  d.trials_var = trials_var;
  ASSIGN_OR_RETURN(d.emax, ExpectedMaxOfNormals(trials, method));
  d.sr0 = std::sqrt(trials_var) * d.emax;
  ASSIGN_OR_RETURN(d.dsr, ProbabilisticSharpe(m.sharpe, d.sr0, m.n, m.skew, m.kurtosis));
  return d;
}

absl::StatusOr<DeflatedSharpe> DeflatedSharpeRatio(const std::vector<double>& selected_returns,
                                                   const std::vector<double>& trial_sharpes,
                                                   EmaxMethod method) {
  if (trial_sharpes.empty()) {
    return absl::InvalidArgumentError("DSR: the list of trials must include the selected one");
  }
  double var = 0;
  if (trial_sharpes.size() > 1) {
    for (double s : trial_sharpes) {
      if (!std::isfinite(s)) {
        return absl::InvalidArgumentError("DSR: a trial's Sharpe ratio is not finite");
      }
    }
    const Moments tm = ComputeMoments(trial_sharpes);
    var = tm.stddev * tm.stddev;
  }
  return DeflatedSharpeRatio(ComputeMoments(selected_returns),
                             static_cast<int64_t>(trial_sharpes.size()), var, method);
}

}  // namespace flashtick
