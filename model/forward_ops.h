// Internal to model/: the steps the full forward (transformer_forward.cc) and the
// one-tick decode (transformer_step.cc) have in common. Both run the same math on
// the same ForwardWorkspace layout (the decode's is one row); only attention differs
// (causal attention over the chunk vs decode against the K/V cache), so each keeps
// its attention and calls these for the rest. Every op goes through Backend::Run,
// and a failure is named by the pass and the op: "model forward, blocks.0.ln1: …".
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "model/transformer_impl.h"

namespace flashtick {

OpDesc ModelOpDesc(Op op, DType dtype);

class ForwardOps {
 public:
  // `pass` prefixes every error ("model forward", "model step"); all references
  // must outlive this object.
  ForwardOps(Backend* backend, const DeviceParams& params, const ModelConfig& config, DType act,
             const ForwardWorkspace& ws, const char* pass)
      : be_(backend), p_(params), c_(config), act_(act), ws_(ws), pass_(pass) {}

  // Runs one op; `where` names it in the error so a failure deep in the pass is findable.
  absl::Status Run(const OpDesc& d, std::initializer_list<TensorView> in,
                   std::initializer_list<TensorView> out, const std::string& where) const;
  // y = x·Wᵀ + b, or y += x·Wᵀ + b (the residual add) when accumulate; W and b are
  // the parameters `name`.weight and `name`.bias.
  absl::Status Linear(const TensorView& x, const std::string& name, const TensorView& y,
                      bool accumulate) const;
  // y = gelu(x·Wᵀ + b), the MLP's first layer: one matmul with GELU in its epilogue
  // (kernels/ops/matmul.h), so y is written once instead of written, read and rewritten.
  absl::Status LinearGelu(const TensorView& x, const std::string& name, const TensorView& y) const;
  // y = LayerNorm(x) with `name`.weight/.bias; the row statistics go to the first
  // rows of ws.mean / ws.rstd (one per row of y).
  absl::Status LayerNorm(const TensorView& x, const std::string& name,
                         const TensorView& y) const;
  // x = embed(ticks): host fp32 `ticks` (ws.in32's rows of config.features raw
  // columns), encoded into *encode_buffer when the model encodes a column
  // (model/input_encoding.h), copied into ws.in32, cast to the compute dtype, then the
  // embedding linear. The buffer is the caller's, kept across calls.
  absl::Status Embed(const float* ticks, std::vector<float>* encode_buffer) const;
  // Embed's device half, for rows the caller has already put in ws.in32: the cast to
  // the compute dtype, then the embedding linear (a decode step uploads its row and its
  // position in one copy, then calls this).
  absl::Status EmbedUploaded() const;
  // The block's attention input: h = LN1(x); qkv = h·Wqkvᵀ + b. `block` is "blocks.<l>.".
  absl::Status QkvProjection(const std::string& block) const;
  // The rest of the block once attention has written ws.att:
  // x += att·Wprojᵀ + b;  x += gelu(LN2(x)·W1ᵀ + b1)·W2ᵀ + b2.
  absl::Status ProjectionAndMlp(const std::string& block) const;
  // The same on some rows only: `att` and `x` are [rows, C] views (any row stride) of
  // the attention output and the residual stream; LN2 and the MLP run in the first
  // rows of ws.h and ws.mlp.
  absl::Status ProjectionAndMlpRows(const std::string& block, const TensorView& att,
                                    const TensorView& x) const;
  // ws.probs32 = softmax(LN_f(xs)·Wheadᵀ + b) through ws.logits, with `hs` holding
  // LN_f's output (xs and hs: every row of ws.x / ws.h, or a view of some rows).
  // The softmax runs in fp32 when activations are bf16/f16.
  absl::Status HeadProbs(const TensorView& xs, const TensorView& hs) const;

 private:
  Backend* be_;
  const DeviceParams& p_;
  const ModelConfig& c_;
  DType act_;
  const ForwardWorkspace& ws_;
  const char* pass_;
};

}  // namespace flashtick
