// The standard normal distribution, and E[max of N iid standard normals] for the
// Deflated Sharpe ratio (Bailey & López de Prado 2014).
//   Φ(x) = ½·erfc(−x/√2); Φ⁻¹ by Acklam's rational approximation refined by one
//   Halley step (full double precision).
//   E[max_N] = ∫ x·N·φ(x)·Φ(x)^{N−1} dx, integrated with composite Simpson on
//   [−12, √(2 ln N) + 12] (error < 1e-10). N = 3: 0.846284375.
//   The paper's approximation (Gumbel): (1−γ)Φ⁻¹(1 − 1/N) + γΦ⁻¹(1 − 1/(N·e)),
//   γ = Euler–Mascheroni; kept to reproduce the paper's figures, not for gating.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"

namespace flashtick {

double NormalPdf(double x);
double NormalCdf(double x);
// Φ⁻¹(p) for 0 < p < 1 (±inf at 0 and 1, NaN outside).
double NormalQuantile(double p);

enum class EmaxMethod { kExact, kGumbel };
// N ≥ 1 (InvalidArgument otherwise); N = 1 gives 0.
absl::StatusOr<double> ExpectedMaxOfNormals(int64_t n, EmaxMethod method = EmaxMethod::kExact);

}  // namespace flashtick
