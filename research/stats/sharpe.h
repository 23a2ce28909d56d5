// Probabilistic and Deflated Sharpe ratios (docs/research/protocol.md, "Benefit and statistics").
//   PSR(SR*) = Φ( (SR̂ − SR*)·√(T−1) / √(1 − γ₃·SR̂ + ((γ₄−1)/4)·SR̂²) )
//     Bailey & López de Prado (2012), eq. 11: SR̂ per observation, γ₄ non-excess.
//   DSR = PSR(SR₀),  SR₀ = √V[SR̂ₙ] · E[max of N standard normals]
//     Bailey & López de Prado (2014), eq. 2 with the exact E[max] (normal.h);
//     N = every configuration tried (arms × seeds × settings), V = the variance
//     of their SR̂ (sample variance, n−1).
// Paper check (their §3): SR_ann 2.5, T = 1,250, N = 100, V_ann = 0.5, γ₃ = −3,
// γ₄ = 10 → SR₀ = 0.113172 per day and DSR = 0.900397 with their Gumbel E[max];
// 0.112143 and 0.905444 with the exact one.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "research/stats/moments.h"
#include "research/stats/normal.h"

namespace flashtick {

// InvalidArgument when T < 2, inputs are not finite, or the variance term
// 1 − γ₃SR̂ + ((γ₄−1)/4)SR̂² is not positive (the normal approximation breaks).
absl::StatusOr<double> ProbabilisticSharpe(double sharpe, double sharpe_star, int64_t t,
                                           double skew, double kurtosis);
absl::StatusOr<double> ProbabilisticSharpe(const std::vector<double>& returns, double sharpe_star);

struct DeflatedSharpe {
  double sharpe = 0;      // SR̂ of the selected series
  double sr0 = 0;         // the expected maximum SR̂ under the null (no skill)
  double emax = 0;        // E[max of N standard normals]
  double trials_var = 0;  // V[SR̂ₙ]
  int64_t trials = 0;     // N
  double dsr = 0;         // PSR(SR₀)
};

// From a target's moments and the number and variance of trials.
absl::StatusOr<DeflatedSharpe> DeflatedSharpeRatio(const Moments& selected, int64_t trials,
                                                   double trials_var,
                                                   EmaxMethod method = EmaxMethod::kExact);
// From the selected returns and the SR̂ of every configuration tried (it included).
absl::StatusOr<DeflatedSharpe> DeflatedSharpeRatio(const std::vector<double>& selected_returns,
                                                   const std::vector<double>& trial_sharpes,
                                                   EmaxMethod method = EmaxMethod::kExact);

}  // namespace flashtick
