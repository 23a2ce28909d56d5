// Transformer: the causal tick transformer (inference side). Per step t a feature
// vector x_t ∈ R^F (train/features.h) → linear embedding → L pre-norm blocks
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
// with config.json (model/config.h) beside it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "model/config.h"

namespace flashtick {

class Transformer {
 public:
  // Reads <dir>/config.json and <dir>/model.safetensors onto `backend` (not owned).
  static absl::StatusOr<std::unique_ptr<Transformer>> Load(const std::string& dir, Backend* backend);
  // Deterministic initialisation from a seed (GPT-2 style: N(0, 0.02), residual
  // projections scaled by 1/sqrt(2·layers), LayerNorm γ=1 β=0).
  static absl::StatusOr<std::unique_ptr<Transformer>> InitRandom(const ModelConfig& config,
                                                                 uint64_t seed, Backend* backend);
  // Writes config.json and model.safetensors atomically into dir (created if missing).
  absl::Status Save(const std::string& dir) const;

  // ticks: host fp32 [B, T, F] row-major. Returns host fp32 probabilities
  // [B, T, classes], or [B, 1, classes] (the last step only) when last_only.
  // Thread-safe: concurrent calls are serialised on this model's workspace.
  absl::StatusOr<std::vector<float>> Predict(absl::Span<const float> ticks, int64_t B, int64_t T,
                                             bool last_only);

  const ModelConfig& config() const { return config_; }
  Backend* backend() const { return backend_; }
  // The attention kernel path that Predict runs ("cpu_reference", "flash_cuda_sm90_d64", ...).
  std::string kernel_path() const;
  int64_t parameter_count() const;

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
