// Transformer::AttentionWeights (model/transformer.h): the attention weights of chosen
// query steps, read off one forward. After each layer's attention the probe copies the
// layer's rotated q and k (the fused QKV buffer, [T, (H + 2·Hkv)·D]) and its log-sum-exp
// L [H, T] to the host and forms, for each chosen query step i and query head h,
//   P(i → j) = exp(s·⟨q_i,h , k_j,g⟩ − L_i,h),   j ≤ i,   g = h / (H / Hkv),  s = 1/√D,
// the softmax row of kernels/ops/attention.h without the T×T matrix. Each row sums to 1
// up to the rounding of q, k (the compute dtype) and of L; the model tests check it.
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/common/half.h"
#include "kernels/ops/attention.h"
#include "model/transformer.h"
#include "model/transformer_impl.h"

namespace flashtick {
namespace {

// Element i of a host buffer of dtype `dt`, as a double.
double HostValue(DType dt, const std::vector<char>& buf, int64_t i) {
  switch (dt) {
    case DType::kF64: {
      double v;
      std::memcpy(&v, buf.data() + i * 8, 8);
      return v;
    }
    case DType::kF32: {
      float v;
      std::memcpy(&v, buf.data() + i * 4, 4);
      return v;
    }
    case DType::kBF16:
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, buf.data() + i * 2, 2);
      return dt == DType::kBF16 ? Bf16BitsToFloat(h) : HalfBitsToFloat(h);
    }
    default:
      return std::nan("");
  }
}

}  // namespace

absl::StatusOr<std::vector<std::vector<float>>> Transformer::AttentionWeights(
    absl::Span<const float> ticks, int64_t T, absl::Span<const int64_t> rows) {
  const ModelConfig& c = config_;
  const int64_t F = c.features, H = c.heads, Hkv = c.kv_heads, D = c.head_dim();
  if (T < 1 || T > c.max_context)
    return absl::InvalidArgumentError(absl::StrCat("attention weights: T=", T, " outside [1, ",
                                                   c.max_context, "]"));
  if (static_cast<int64_t>(ticks.size()) != T * F)
    return absl::InvalidArgumentError(absl::StrCat("attention weights: ticks has ", ticks.size(),
                                                   " values; one sequence [1, ", T, ", ", F,
                                                   "] needs ", T * F));
  for (int64_t r : rows)
    if (r < 0 || r >= T)
      return absl::InvalidArgumentError(absl::StrCat("attention weights: row ", r, " outside [0, ", T, ")"));
  for (size_t i = 0; i < ticks.size(); ++i)
    if (!std::isfinite(ticks[i]))
      return absl::InvalidArgumentError(absl::StrCat("attention weights: tick feature ", i % F,
                                                     " of step ", i / F, " is NaN or Inf"));
  const double scale = AttentionScale(AttentionAttrs{}, D);
  const int64_t R = static_cast<int64_t>(rows.size()), group = H / Hkv;
  std::vector<std::vector<float>> weights(static_cast<size_t>(c.layers),
                                          std::vector<float>(static_cast<size_t>(R * H * T), 0.0f));
  std::vector<char> qkv, lse;
  auto probe = [&](int layer, const TensorView& q, const TensorView& k,
                   const TensorView& l) -> absl::Status {
    // q's row stride is the fused buffer's width W; k starts H·D columns in.
    const int64_t W = q.strides[1], esize = DTypeSize(q.dtype);
    qkv.resize(static_cast<size_t>(T * W * esize));
    lse.resize(l.bytes());
    RETURN_IF_ERROR(backend_->Copy(qkv.data(), DeviceKind::kCpu, q.data, q.device, qkv.size()));
    RETURN_IF_ERROR(backend_->Copy(lse.data(), DeviceKind::kCpu, l.data, l.device, lse.size()));
    RETURN_IF_ERROR(backend_->Synchronize());
    const int64_t k_col = (static_cast<const char*>(k.data) - static_cast<const char*>(q.data)) / esize;
    std::vector<float>& out = weights[static_cast<size_t>(layer)];
    for (int64_t r = 0; r < R; ++r) {
      const int64_t i = rows[static_cast<size_t>(r)];
      for (int64_t h = 0; h < H; ++h) {
        const int64_t g = h / group;
        const double L = HostValue(l.dtype, lse, h * T + i);
        float* p = &out[static_cast<size_t>((r * H + h) * T)];
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) {
            dot += HostValue(q.dtype, qkv, i * W + h * D + d) *
                   HostValue(q.dtype, qkv, j * W + k_col + g * D + d);
          }
          p[j] = static_cast<float>(std::exp(scale * dot - L));
        }
      }
    }
    return absl::OkStatus();
  };
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<float> probs(static_cast<size_t>(c.classes));
  RETURN_IF_ERROR(impl_->ForwardChunk(c, backend_, ticks.data(), 1, T, /*last_only=*/true,
                                      probs.data(), {}, probe));
  return weights;
}

}  // namespace flashtick
