// In-place iterative radix-2 FFT (Cooley–Tukey), for the Davies–Harte generator.
// X_k = Σ_j x_j · exp(−2πi·jk/n) (forward); the inverse uses +i and no 1/n.
// n must be a power of two (InvalidArgument otherwise).
#pragma once

#include <complex>
#include <vector>

#include "absl/status/status.h"

namespace flashtick {

absl::Status Fft(std::vector<std::complex<double>>& x, bool inverse = false);

}  // namespace flashtick
