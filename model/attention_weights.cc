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
#include "kernels/common/element_value.h"
#include "kernels/ops/attention.h"
#include "model/transformer.h"
#include "model/transformer_impl.h"

namespace flashtick {
namespace {

// A host buffer of dtype `dt` decoded to doubles, once per layer rather than per use in
// the O(R·H·T·D) loop below.
std::vector<double> HostDoubles(DType dt, const std::vector<char>& buf) {
  std::vector<double> out(buf.size() / DTypeSize(dt));
  for (size_t i = 0; i < out.size(); ++i) out[i] = ElementValue(dt, buf.data(), i);
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<float>>> Transformer::AttentionWeights(
    absl::Span<const float> ticks, int64_t T, absl::Span<const int64_t> rows) {
  const ModelConfig& c = config_;
  const int64_t H = c.heads, Hkv = c.kv_heads, D = c.head_dim();
  RETURN_IF_ERROR(CheckForwardInput(c, ticks, /*B=*/1, T, "attention weights"));
  for (int64_t r : rows)
    if (r < 0 || r >= T)
      return absl::InvalidArgumentError(absl::StrCat("attention weights: row ", r, " outside [0, ", T, ")"));
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
    const std::vector<double> qk = HostDoubles(q.dtype, qkv), L_rows = HostDoubles(l.dtype, lse);
    std::vector<float>& out = weights[static_cast<size_t>(layer)];
    for (int64_t r = 0; r < R; ++r) {
      const int64_t i = rows[static_cast<size_t>(r)];
      for (int64_t h = 0; h < H; ++h) {
        const int64_t g = h / group;
        const double L = L_rows[static_cast<size_t>(h * T + i)];
        float* p = &out[static_cast<size_t>((r * H + h) * T)];
        const double* qi = &qk[static_cast<size_t>(i * W + h * D)];
        for (int64_t j = 0; j <= i; ++j) {
          const double* kj = &qk[static_cast<size_t>(j * W + k_col + g * D)];
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
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
