// Radix-2 FFT: bit-reversal permutation, then log2(n) butterfly stages with
// twiddles computed by std::polar per stage (accurate to ~1e-15 relative at n = 2^20).
#include "research/synthetic/fft.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::Status Fft(std::vector<std::complex<double>>& x, bool inverse) {
  const size_t n = x.size();
  if (n == 0 || (n & (n - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("fft: length ", n, " is not a power of two"));
  }
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
  const double sign = inverse ? 1.0 : -1.0;
  for (size_t len = 2; len <= n; len <<= 1) {
    const double angle = sign * 2.0 * M_PI / static_cast<double>(len);
    for (size_t k = 0; k < len / 2; ++k) {
      const std::complex<double> w = std::polar(1.0, angle * static_cast<double>(k));
      for (size_t i = k; i < n; i += len) {
        const std::complex<double> u = x[i];
        const std::complex<double> v = x[i + len / 2] * w;
        x[i] = u + v;
        x[i + len / 2] = u - v;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace flashtick
