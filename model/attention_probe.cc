// AttentionProbe::Weights (see attention_probe.h).
#include "model/attention_probe.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/common/element_value.h"

namespace flashtick {

absl::Status AttentionProbe::CheckRows(int layer, absl::Span<const int64_t> steps) const {
  if (layer < 0 || layer >= layers())
    return absl::InvalidArgumentError(absl::StrCat("attention probe: layer ", layer, " outside [0, ", layers(), ")"));
  for (int64_t i : steps)
    if (i < 0 || i >= T_)
      return absl::InvalidArgumentError(absl::StrCat("attention probe: step ", i, " outside [0, ", T_, ")"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> AttentionProbe::SinkWeights(int layer,
                                                               absl::Span<const int64_t> steps) const {
  if (absl::Status s = CheckRows(layer, steps); !s.ok()) return s;
  const Layer& l = layers_[static_cast<size_t>(layer)];
  std::vector<float> out(steps.size() * static_cast<size_t>(H_), 0.0f);
  if (!l.excludes_self) return out;
  for (size_t r = 0; r < steps.size(); ++r)
    for (int64_t h = 0; h < H_; ++h)  // the sink's score is 0: its weight is exp(0 − L)
      out[r * static_cast<size_t>(H_) + static_cast<size_t>(h)] = static_cast<float>(
          std::exp(-ElementValue(l.lse_dtype, l.lse.data(), static_cast<size_t>(h * T_ + steps[r]))));
  return out;
}

absl::StatusOr<std::vector<float>> AttentionProbe::Weights(int layer,
                                                           absl::Span<const int64_t> steps) const {
  if (absl::Status s = CheckRows(layer, steps); !s.ok()) return s;
  const Layer& l = layers_[static_cast<size_t>(layer)];
  const int64_t W = l.row_width, R = static_cast<int64_t>(steps.size()), group = H_ / Hkv_;
  // The keys are decoded once per call, not once per query row, and only those the
  // latest query can see (causal: j ≤ max steps), (max + 1)·Hkv·D values.
  int64_t last = -1;
  for (int64_t i : steps) last = std::max(last, i);
  std::vector<double> k(static_cast<size_t>((last + 1) * Hkv_ * D_));
  for (int64_t j = 0; j <= last; ++j)
    for (int64_t c = 0; c < Hkv_ * D_; ++c)
      k[static_cast<size_t>(j * Hkv_ * D_ + c)] =
          ElementValue(l.qkv_dtype, l.qkv.data(), static_cast<size_t>(j * W + l.k_col + c));
  std::vector<float> out(static_cast<size_t>(R * H_ * T_), 0.0f);
  std::vector<double> q(static_cast<size_t>(D_));
  for (int64_t r = 0; r < R; ++r) {
    const int64_t i = steps[static_cast<size_t>(r)];
    for (int64_t h = 0; h < H_; ++h) {
      for (int64_t d = 0; d < D_; ++d)
        q[static_cast<size_t>(d)] = ElementValue(l.qkv_dtype, l.qkv.data(), static_cast<size_t>(i * W + h * D_ + d));
      const double L = ElementValue(l.lse_dtype, l.lse.data(), static_cast<size_t>(h * T_ + i));
      const int64_t g = h / group;
      float* p = &out[static_cast<size_t>((r * H_ + h) * T_)];
      for (int64_t j = 0; j < i + (l.excludes_self ? 0 : 1); ++j) {
        const double* kj = &k[static_cast<size_t>((j * Hkv_ + g) * D_)];
        double dot = 0;
        for (int64_t d = 0; d < D_; ++d) dot += q[static_cast<size_t>(d)] * kj[d];
        p[j] = static_cast<float>(std::exp(scale_ * dot - L));
      }
    }
  }
  return out;
}

}  // namespace flashtick
