// Transformer: the causal tick transformer (inference side). Per step t a feature
// vector x_t ∈ R^F (ticks/features.h) → linear embedding → L pre-norm blocks
// [x += Wo·Attn(RoPE(Wq,k,v·LN1(x))); x += W2·gelu(W1·LN2(x))] → LN_f → 3-class
// head (down / flat / up) → softmax. Causal attention, rotary positions, so one set
// of weights runs at any T ≤ max_context. All ops run through a Backend.
//
// Weights are a safetensors file (model.safetensors) with PyTorch-style names,
// each [out, in] for linear layers:
//   embed.weight [C,F] embed.bias [C]
//   blocks.{l}.ln1.weight/bias [C]   blocks.{l}.attn.qkv.weight [(H+2·Hkv)·D, C] .bias
//   blocks.{l}.attn.proj.weight [C,C] .bias   blocks.{l}.ln2.weight/bias [C]
//   blocks.{l}.mlp.fc1.weight [r·C, C] .bias   blocks.{l}.mlp.fc2.weight [C, r·C] .bias
//   ln_f.weight/bias [C]   head.weight [classes, C]  head.bias [classes]
// with config.json (model/config.h) beside it. The fused QKV rows are head-major:
// rows [0, H·D) give q (head h at rows h·D..h·D+D−1), then Hkv·D rows of k, then v.
// Weights are stored fp32; the forward computes in ModelOptions::compute_dtype.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "model/attention_probe.h"
#include "model/config.h"

namespace flashtick {

class DecodeState;
class DeviceParams;

struct ModelOptions {
  // Dtype of activations and of the weight copies the ops read. Unset: fp32 on the
  // CPU, bf16 on CUDA. kF64 on the CPU is the reference for the precision check.
  std::optional<DType> compute_dtype;
  // Activation memory one batch chunk may use; a batch is split into chunks of whole
  // sequences to stay under it (one sequence always runs, whatever its length).
  int64_t workspace_bytes = int64_t{512} << 20;
};

class Transformer {
 public:
  // Reads <dir>/config.json and <dir>/model.safetensors onto `backend` (not owned).
  static absl::StatusOr<std::unique_ptr<Transformer>> Load(const std::string& dir, Backend* backend);
  static absl::StatusOr<std::unique_ptr<Transformer>> Load(const std::string& dir, Backend* backend,
                                                           const ModelOptions& options);
  // Deterministic initialisation from a seed (GPT-2 style: N(0, 0.02), residual
  // projections scaled by 1/sqrt(2·layers), LayerNorm γ=1 β=0).
  static absl::StatusOr<std::unique_ptr<Transformer>> InitRandom(const ModelConfig& config,
                                                                 uint64_t seed, Backend* backend);
  static absl::StatusOr<std::unique_ptr<Transformer>> InitRandom(const ModelConfig& config,
                                                                 uint64_t seed, Backend* backend,
                                                                 const ModelOptions& options);
  // Writes config.json and model.safetensors atomically into dir (created if missing).
  absl::Status Save(const std::string& dir) const;

  // ticks: host fp32 [B, T, F] row-major. Returns host fp32 probabilities
  // [B, T, classes], or [B, 1, classes] (the last step only) when last_only.
  // Thread-safe: concurrent calls are serialised on this model's workspace.
  absl::StatusOr<std::vector<float>> Predict(absl::Span<const float> ticks, int64_t B, int64_t T,
                                             bool last_only);
  // The same, asking `stop` (may be empty) between layers, once the backend has
  // finished the layers before; true ends the forward with CANCELLED. A single
  // long sequence cannot be split into rows, so this bounds what an abandoned
  // request costs to about one layer of its forward.
  absl::StatusOr<std::vector<float>> Predict(absl::Span<const float> ticks, int64_t B, int64_t T,
                                             bool last_only, const std::function<bool()>& stop);
  // The same, writing the probabilities into `probs` (exactly B × (T or 1) ×
  // classes floats, else INVALID_ARGUMENT) instead of a new vector: the server
  // downloads them straight into the response's buffer. On error `probs` may
  // hold part of the answer.
  // valid_steps (with last_only; 0: T): every sequence's steps valid_steps..T−1 are
  // right padding (a server pads lengths to a few shapes, docs/serving.md), and the
  // answer is step valid_steps − 1's. Attention is causal, so the padding changes
  // nothing before it; the last layer's decode stops its keys there too.
  absl::Status PredictInto(absl::Span<const float> ticks, int64_t B, int64_t T, bool last_only,
                           const std::function<bool()>& stop, absl::Span<float> probs,
                           int64_t valid_steps = 0);

  // Incremental decoding (model/decode_state.h): runs one new step `row` (host fp32
  // [F]) at position state->steps() against the state's per-layer K/V cache, appends
  // its keys and values, and returns host fp32 probabilities [classes] — the same as
  // row state->steps() of Predict over the whole prefix. INVALID_ARGUMENT for a
  // wrong width, NaN/Inf or a state of another model; RESOURCE_EXHAUSTED past
  // max_context. On error the state keeps its steps (model/transformer_step.cc).
  absl::StatusOr<std::vector<float>> Step(DecodeState* state, absl::Span<const float> row);
  // Where attention looks: for one sequence (ticks host fp32 [1, T, F]) and query steps
  // `rows` (each in [0, T)), the softmax weights of every layer's query heads over the
  // keys, weights[l][(r·H + h)·T + j] = P_l,h(rows[r] → j), 0 for j > rows[r] (causal).
  // Read off the forward's own rotated q, k and log-sum-exp L (the attention op's
  // second output): P(i → j) = exp(s·q_i·k_j − L_i), s = 1/√D, so no T×T matrix is
  // formed (docs/derivations/attention_bwd_bwd.md, the forward). Costs one forward
  // plus a host copy of each layer's q, k and L. For diagnostics (docs/sweeps/keyed.md).
  absl::StatusOr<std::vector<std::vector<float>>> AttentionWeights(absl::Span<const float> ticks,
                                                                   int64_t T,
                                                                   absl::Span<const int64_t> rows);
  // The same forward, kept: each layer's rotated q, k and L on the host, so that the
  // rows of any steps in any layer are read afterwards without another forward
  // (model/attention_probe.h). AttentionWeights is this plus Weights per layer.
  absl::StatusOr<AttentionProbe> ProbeAttention(absl::Span<const float> ticks, int64_t T);
  // True when the backend runs Op::kAttentionDecode in this model's compute dtype,
  // i.e. when Step can run; otherwise callers recompute the prefix with Predict.
  bool SupportsDecode() const;

  const ModelConfig& config() const { return config_; }
  Backend* backend() const { return backend_; }
  // The attention kernel path that Predict runs ("cpu_reference", "flash_cuda_sm90_d64", ...).
  // OK when the backend has a kernel for every op serving runs on this model: the
  // attention forward and decode at its head dim and compute dtype (the rest are
  // shape-generic). Otherwise FailedPrecondition naming the op, the head dim and the
  // kernel path, so a server can refuse the model at load instead of failing each call.
  absl::Status CheckServable() const;
  std::string kernel_path() const;
  int64_t parameter_count() const;
  // The dtype Predict computes in (see ModelOptions).
  DType compute_dtype() const;
  // The weights on the backend (fp32 masters and compute copies), for training code.
  const DeviceParams& params() const;

  ~Transformer();

 private:
  Transformer(ModelConfig config, Backend* backend);
  struct Impl;
  ModelConfig config_;
  Backend* backend_;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
};

}  // namespace flashtick
