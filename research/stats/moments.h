// Sample moments of a return series, as the Sharpe-ratio statistics use them
// (Bailey & López de Prado 2012; scipy.stats conventions):
//   mean, sd = √(Σ(x−x̄)²/(n−1)), SR̂ = mean/sd per observation (not annualised),
//   skew γ₃ = m₃/m₂^{3/2}, kurtosis γ₄ = m₄/m₂² (non-excess; 3 for a normal),
//   with central moments m_j = Σ(x−x̄)^j/n (scipy.stats.skew/kurtosis, bias=True).
// A constant series has sd 0: SR̂ is 0 when the mean is 0, ±inf otherwise, and
// γ₃ = 0, γ₄ = 3 by convention (they are undefined; the PSR then needs care).
#pragma once

#include <cstdint>
#include <vector>

namespace flashtick {

struct Moments {
  int64_t n = 0;
  double mean = 0, stddev = 0, sharpe = 0, skew = 0, kurtosis = 3;
};

Moments ComputeMoments(const std::vector<double>& x);
double SharpeRatio(const std::vector<double>& x);

}  // namespace flashtick
