// ComputeMoments (see moments.h): two passes in double.
#include "research/stats/moments.h"

#include <cmath>
#include <limits>

namespace flashtick {

Moments ComputeMoments(const std::vector<double>& x) {
  Moments m;
  m.n = static_cast<int64_t>(x.size());
  if (m.n == 0) return m;
  for (double v : x) m.mean += v;
  m.mean /= static_cast<double>(m.n);
  double m2 = 0, m3 = 0, m4 = 0;
  for (double v : x) {
    const double d = v - m.mean, d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  const double n = static_cast<double>(m.n);
  m.stddev = m.n > 1 ? std::sqrt(m2 / (n - 1)) : 0.0;
  m2 /= n;
  m3 /= n;
  m4 /= n;
  // Relative threshold: a series whose spread is rounding noise is constant.
  const bool constant = !(m2 > 1e-30 * (m.mean * m.mean + 1e-300));
  if (constant) {
    m.stddev = 0;
    m.sharpe = m.mean == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), m.mean);
    return m;
  }
  m.sharpe = m.mean / m.stddev;
  m.skew = m3 / std::pow(m2, 1.5);
  m.kurtosis = m4 / (m2 * m2);
  return m;
}

double SharpeRatio(const std::vector<double>& x) { return ComputeMoments(x).sharpe; }

}  // namespace flashtick
