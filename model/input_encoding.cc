// EncodeInputs: model/input_encoding.h has the math and the reasons.
#include "model/input_encoding.h"

#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

namespace flashtick {

void EncodeInputs(const ModelConfig& c, const float* in, int64_t rows, float* out) {
  const int F = c.features, W = c.input_width(), j = c.fourier_feature;
  if (j < 0) {
    std::memcpy(out, in, sizeof(float) * static_cast<size_t>(rows) * F);
    return;
  }
  // 2π/p once per period; the angle in double so that a large x keeps its phase.
  std::vector<double> omega(c.fourier_periods.size());
  for (size_t p = 0; p < omega.size(); ++p) omega[p] = 2.0 * std::numbers::pi / c.fourier_periods[p];
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * F;
    float* y = out + r * W;
    int o = 0;
    for (int f = 0; f < F; ++f)
      if (f != j) y[o++] = x[f];
    for (double w : omega) {
      const double a = w * x[j];
      y[o++] = static_cast<float>(std::sin(a));
      y[o++] = static_cast<float>(std::cos(a));
    }
  }
}

const float* InputRows(const ModelConfig& c, const float* ticks, int64_t rows,
                       std::vector<float>* buffer) {
  if (c.fourier_feature < 0) return ticks;
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(c.input_width());
  if (buffer->size() < n) buffer->resize(n);
  EncodeInputs(c, ticks, rows, buffer->data());
  return buffer->data();
}

}  // namespace flashtick
