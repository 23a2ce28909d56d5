// AttentionProbe: what one forward's attention saw, kept on the host so that the
// weights of any query step in any layer can be read afterwards without another
// forward. Per layer it holds the rotated q and k (the fused QKV buffer,
// [T, (H + 2·Hkv)·D], in the compute dtype) and the log-sum-exp L [H, T], and forms
//   P(i → j) = exp(s·⟨q_i,h , k_j,g⟩ − L_i,h),   j ≤ i,   g = h / (H / Hkv),  s = 1/√D,
// the softmax row of kernels/ops/attention.h without the T×T matrix
// (docs/derivations/attention_bwd_bwd.md, the forward). Each row sums to 1 up to the
// rounding of q, k and L. Made by Transformer::ProbeAttention; costs the forward plus a
// host copy of T·(H + 2·Hkv)·D elements and H·T statistics per layer (25 MiB a layer in
// bf16 at T = 32,768 and width 128). For diagnostics (docs/sweeps/keyed.md).
// In a layer that excludes the step itself (ModelConfig::exclude_self_layers) the keys
// kept are the unshifted ones, so P(i → j) is over j < i, P(i → i) is 0, and a row sums
// to 1 less the weight of the zero sink key, exp(−L_i).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/tensor.h"

namespace flashtick {

class AttentionProbe {
 public:
  int layers() const { return static_cast<int>(layers_.size()); }
  int64_t steps() const { return T_; }
  int64_t heads() const { return H_; }
  // weights[(r·H + h)·T + j] = P_layer,h(steps[r] → j), 0 for j > steps[r] (causal;
  // for j ≥ steps[r] in a layer that excludes the step itself).
  // INVALID_ARGUMENT for a layer or a step out of range.
  absl::StatusOr<std::vector<float>> Weights(int layer, absl::Span<const int64_t> steps) const;
  // sink[r·H + h]: the weight of the zero sink key in row steps[r] of head h, exp(−L), in
  // a layer that excludes the step itself; 0 in any other layer. Weights plus it sum to 1.
  absl::StatusOr<std::vector<float>> SinkWeights(int layer, absl::Span<const int64_t> steps) const;

 private:
  friend class Transformer;
  absl::Status CheckRows(int layer, absl::Span<const int64_t> steps) const;
  struct Layer {
    DType qkv_dtype = DType::kF32, lse_dtype = DType::kF32;
    int64_t row_width = 0;  // W: the fused buffer's row stride, in elements
    int64_t k_col = 0;      // where k starts in a row: H·D
    bool excludes_self = false;  // the layer attends to j < i only (and a zero sink)
    std::vector<char> qkv, lse;
  };
  int64_t T_ = 0, H_ = 0, Hkv_ = 0, D_ = 0;
  double scale_ = 1.0;
  std::vector<Layer> layers_;
};

}  // namespace flashtick
