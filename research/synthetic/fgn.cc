// Davies–Harte fGn and the aggregated-variance Hurst estimate (see fgn.h).
#include "research/synthetic/fgn.h"

#include <cmath>
#include <complex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/rng.h"
#include "research/synthetic/fft.h"

namespace flashtick {

double FgnAutocovariance(double hurst, int64_t lag) {
  const double k = std::fabs(static_cast<double>(lag));
  const double h2 = 2.0 * hurst;
  return 0.5 * (std::pow(k + 1.0, h2) - 2.0 * std::pow(k, h2) + std::pow(std::fabs(k - 1.0), h2));
}

absl::StatusOr<std::vector<double>> FractionalGaussianNoise(int64_t n, double hurst,
                                                            uint64_t seed) {
  if (!(hurst > 0.0 && hurst < 1.0) || n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("fgn: need 0 < H < 1 and n ≥ 1, got H=", hurst, " n=", n));
  }
  size_t m = 2;
  while (m < static_cast<size_t>(2 * (n - 1))) m <<= 1;
  const size_t half = m / 2;
  // First row of the circulant: γ(0..M/2), then mirrored γ(M/2−1..1).
  std::vector<std::complex<double>> c(m);
  for (size_t j = 0; j <= half; ++j) c[j] = FgnAutocovariance(hurst, static_cast<int64_t>(j));
  for (size_t j = half + 1; j < m; ++j) c[j] = c[m - j];
  RETURN_IF_ERROR(Fft(c));
  Rng rng(seed);
  std::vector<std::complex<double>> y(m);
  for (size_t k = 0; k < m; ++k) {
    double lambda = c[k].real();  // real: c is symmetric
    // Rounding can leave tiny negatives where λ ≈ 0; a real negative eigenvalue
    // means the embedding is not a covariance and the sample would be wrong.
    if (lambda < -1e-9 * static_cast<double>(m)) {
      return absl::FailedPreconditionError(
          absl::StrCat("fgn: circulant eigenvalue ", lambda, " < 0 at k=", k, " (H=", hurst, ")"));
    }
    lambda = std::max(lambda, 0.0);
    const double scale = std::sqrt(lambda / static_cast<double>(m));
    const double a = rng.Normal();
    const double b = rng.Normal();
    y[k] = std::complex<double>(scale * a, scale * b);
  }
  RETURN_IF_ERROR(Fft(y));
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = y[i].real();
  return out;
}

absl::StatusOr<double> HurstAggregatedVariance(const std::vector<double>& x, int64_t min_blocks) {
  const int64_t n = static_cast<int64_t>(x.size());
  if (min_blocks < 2 || n < 4 * min_blocks) {
    return absl::InvalidArgumentError(
        absl::StrCat("hurst: need at least ", 4 * min_blocks, " samples, got ", n));
  }
  std::vector<double> lx, ly;
  for (int64_t m = 2; n / m >= min_blocks; m *= 2) {
    const int64_t blocks = n / m;
    std::vector<double> means(blocks, 0.0);
    double grand = 0.0;
    for (int64_t b = 0; b < blocks; ++b) {
      for (int64_t i = 0; i < m; ++i) means[b] += x[b * m + i];
      means[b] /= static_cast<double>(m);
      grand += means[b];
    }
    grand /= static_cast<double>(blocks);
    double var = 0.0;
    for (double v : means) var += (v - grand) * (v - grand);
    var /= static_cast<double>(blocks - 1);
    if (!(var > 0.0)) return absl::InvalidArgumentError("hurst: a block variance is zero");
    lx.push_back(std::log(static_cast<double>(m)));
    ly.push_back(std::log(var));
  }
  const double k = static_cast<double>(lx.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < lx.size(); ++i) {
    sx += lx[i];
    sy += ly[i];
    sxx += lx[i] * lx[i];
    sxy += lx[i] * ly[i];
  }
  const double slope = (k * sxy - sx * sy) / (k * sxx - sx * sx);  // = 2H − 2
  return 1.0 + 0.5 * slope;
}

}  // namespace flashtick
