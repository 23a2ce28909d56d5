// Transformer::ProbeAttention and Transformer::AttentionWeights (model/transformer.h):
// one forward whose per-layer probe copies each layer's rotated q and k (the fused QKV
// buffer) and its log-sum-exp to the host, after that layer's attention; the weights are
// then read off them (model/attention_probe.h).
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "model/attention_probe.h"
#include "model/transformer.h"
#include "model/transformer_impl.h"

namespace flashtick {

absl::StatusOr<AttentionProbe> Transformer::ProbeAttention(absl::Span<const float> ticks, int64_t T) {
  const ModelConfig& c = config_;
  RETURN_IF_ERROR(CheckForwardInput(c, ticks, /*B=*/1, T, "attention probe"));
  AttentionProbe out;
  out.T_ = T;
  out.H_ = c.heads;
  out.Hkv_ = c.kv_heads;
  out.D_ = c.head_dim();
  out.scale_ = AttentionScale(AttentionAttrs{}, out.D_);
  out.layers_.resize(static_cast<size_t>(c.layers));
  auto probe = [&](int layer, const TensorView& q, const TensorView& k,
                   const TensorView& l) -> absl::Status {
    AttentionProbe::Layer& kept = out.layers_[static_cast<size_t>(layer)];
    // q's row stride is the fused buffer's width W; k starts H·D columns in.
    kept.row_width = q.strides[1];
    kept.excludes_self = c.layer_excludes_self(layer);
    kept.qkv_dtype = q.dtype;
    kept.lse_dtype = l.dtype;
    const int64_t esize = DTypeSize(q.dtype);
    kept.k_col = (static_cast<const char*>(k.data) - static_cast<const char*>(q.data)) / esize;
    kept.qkv.resize(static_cast<size_t>(T * kept.row_width * esize));
    kept.lse.resize(l.bytes());
    RETURN_IF_ERROR(backend_->Copy(kept.qkv.data(), DeviceKind::kCpu, q.data, q.device, kept.qkv.size()));
    RETURN_IF_ERROR(backend_->Copy(kept.lse.data(), DeviceKind::kCpu, l.data, l.device, kept.lse.size()));
    return backend_->Synchronize();
  };
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<float> probs(static_cast<size_t>(c.classes));
  RETURN_IF_ERROR(impl_->ForwardChunk(c, backend_, ticks.data(), 1, T, /*last_only=*/true,
                                      probs.data(), {}, probe));
  return out;
}

absl::StatusOr<std::vector<std::vector<float>>> Transformer::AttentionWeights(
    absl::Span<const float> ticks, int64_t T, absl::Span<const int64_t> rows) {
  for (int64_t r : rows)
    if (r < 0 || r >= T)
      return absl::InvalidArgumentError(absl::StrCat("attention weights: row ", r, " outside [0, ", T, ")"));
  ASSIGN_OR_RETURN(AttentionProbe probe, ProbeAttention(ticks, T));
  std::vector<std::vector<float>> weights(static_cast<size_t>(probe.layers()));
  for (int l = 0; l < probe.layers(); ++l) {
    ASSIGN_OR_RETURN(weights[static_cast<size_t>(l)], probe.Weights(l, rows));
  }
  return weights;
}

}  // namespace flashtick
