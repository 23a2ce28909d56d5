// Internal to model/: the state behind Transformer (weights on the backend, compute
// dtype, the reusable activation workspace) and the forward pass over one batch
// chunk (model/transformer_forward.cc). Not part of the public API.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "model/params.h"
#include "model/transformer.h"

namespace flashtick {

// Activation buffers of one batch chunk of Bc sequences × T steps (R = Bc·T rows),
// carved from one allocation. Every buffer is O(R): nothing is T×T.
struct ForwardWorkspace {
  TensorView in32;     // fp32 [R, F]: host ticks land here
  TensorView in;       // compute [R, F] (in32 itself when computing in fp32)
  TensorView x, h;     // compute [R, C]: residual stream, LayerNorm output
  TensorView qkv;      // compute [R, (H + 2·Hkv)·D]
  // compute [R, 2·Hkv·D]: the keys and values one step later, for the layers that
  // exclude the step itself (ModelConfig::exclude_self_layers; empty without them)
  TensorView kv_shifted;
  TensorView att;      // compute [R, C] = [Bc, T, H, D] attention output
  TensorView mlp;      // compute [R, mlp_ratio·C]
  TensorView mean, rstd;  // ParamDType [R]
  TensorView lse;      // AttentionStatsDType [Bc, H, T]
  TensorView logits;   // compute [rows_out, classes]; softmaxed in place unless bf16/f16
  TensorView probs32;  // fp32 [rows_out, classes] (logits itself when computing in fp32)
  size_t bytes = 0;

  // Lays the buffers out from `base` (nullptr: only compute `bytes`).
  static ForwardWorkspace Carve(void* base, DeviceKind device, const ModelConfig& c, DType act,
                                int64_t Bc, int64_t T, bool last_only);
};

// The checks every forward entry point makes on host ticks [B, T, F]: sizes, T within
// max_context (RESOURCE_EXHAUSTED), finite values. `what` starts the message.
// CheckForwardShape is the first part alone (no pass over the values).
absl::Status CheckForwardShape(const ModelConfig& c, size_t values, int64_t B, int64_t T,
                               const char* what);
absl::Status CheckForwardInput(const ModelConfig& c, absl::Span<const float> ticks, int64_t B,
                               int64_t T, const char* what);

struct Transformer::Impl {
  DType act = DType::kF32;
  ModelOptions options;
  std::unique_ptr<DeviceParams> params;
  std::shared_ptr<void> workspace;
  size_t workspace_capacity = 0;
  // Host rows of encoded inputs (model/input_encoding.h, InputRows), reused by every
  // forward and step; guarded, like the workspace, by the model's one-call-at-a-time lock.
  std::vector<float> encoded_inputs;

  // Runs the forward on Bc sequences of T steps from host `ticks` ([Bc, T, F]) and
  // writes host probabilities to `probs` ([Bc, T or 1, classes]). `stop` (may be
  // empty) is asked between layers, after a Synchronize; true: CANCELLED.
  // `probe` (may be empty) is called after each layer's attention with the layer, the
  // rotated q [Bc, T, H, D] and k [Bc, T, Hkv, D] views and the log-sum-exp [Bc, H, T].
  // valid_steps (last_only only; 0: T): steps valid_steps..T−1 of every sequence are
  // right padding, and the answer is step valid_steps − 1's.
  using AttentionProbe = std::function<absl::Status(int layer, const TensorView& q,
                                                    const TensorView& k, const TensorView& lse)>;
  absl::Status ForwardChunk(const ModelConfig& c, Backend* backend, const float* ticks,
                            int64_t Bc, int64_t T, bool last_only, float* probs,
                            const std::function<bool()>& stop = {},
                            const AttentionProbe& probe = {}, int64_t valid_steps = 0);
};

}  // namespace flashtick
