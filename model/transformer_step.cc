// Transformer::Step: one new tick through the model against a DecodeState's K/V cache.
// Same math and ops as the full forward (model/transformer_forward.cc), for one row at
// position t = state->steps():
//   x = embed(row);  per block: h = LN1(x); qkv = h·Wqkvᵀ + b; q = RoPE_t(q);
//   Kcache[t] = RoPE_t(k); Vcache[t] = v; att = decode(q, Kcache[0..t], Vcache[0..t]);
//   x += att·Wprojᵀ + b; h = LN2(x); x += gelu(h·W1ᵀ + b1)·W2ᵀ + b2
//   probs = softmax(LN_f(x)·Wheadᵀ + b)
// Causal attention of row t over rows 0..t is exactly decode against the first t+1
// cached rows, and RoPE at absolute position t (RopeAttrs::position_offset) rotates k
// as the full forward does, so the probabilities equal row t of Predict. Cost per
// step: O(t·C) attention + O(C²) matmuls. Per step the host waits once (the
// Synchronize before reading the probabilities); the row goes up and the
// probabilities come down through the state's host staging (pinned on CUDA), and the
// step allocates no device memory while the cache has room.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/param_dtype.h"
#include "model/decode_state.h"
#include "model/forward_ops.h"
#include "model/transformer_impl.h"

namespace flashtick {
namespace {

// A [1, 1, heads, D] view of columns [col, col + heads·D) of the one-row [1, W] buffer.
TensorView RowHeads(const TensorView& buf, int64_t col, int64_t heads, int64_t D) {
  return MakeView(static_cast<char*>(buf.data) + col * DTypeSize(buf.dtype), buf.dtype,
                  buf.device, {1, 1, heads, D});
}

}  // namespace

bool Transformer::SupportsDecode() const {
  OpDesc d = ModelOpDesc(Op::kAttentionDecode, impl_->act);
  d.attention.head_dim = config_.head_dim();
  return backend_->Supports(d);
}

absl::StatusOr<std::vector<float>> Transformer::Step(DecodeState* state,
                                                     absl::Span<const float> row) {
  const ModelConfig& c = config_;
  if (state == nullptr || &state->model() != this)
    return absl::InvalidArgumentError(
        "step: the decode state belongs to another model; create it with "
        "DecodeState::Create(this model)");
  const int64_t t = state->steps();
  if (static_cast<int64_t>(row.size()) != c.features)
    return absl::InvalidArgumentError(absl::StrCat("step ", t, ": the row has ", row.size(),
                                                   " features; the model takes ", c.features));
  for (size_t i = 0; i < row.size(); ++i)
    if (!std::isfinite(row[i]))
      return absl::InvalidArgumentError(absl::StrCat(
          "step ", t, ": tick feature ", i, " is NaN or Inf; fix or drop the tick (the "
          "session is unchanged and still expects step ", t, ")"));
  if (!SupportsDecode())
    return absl::UnimplementedError(absl::StrCat(
        "step: backend ", backend_->name(), " has no attention_decode in ",
        DTypeName(impl_->act), "; recompute the prefix with Predict instead"));
  // Rows past steps() may be overwritten freely: a step that fails after writing
  // row t of some layers leaves steps() at t, and the next step rewrites row t.
  std::lock_guard<std::mutex> lock(mu_);  // backend work of this model runs one call at a time
  RETURN_IF_ERROR(state->Reserve(t + 1));
  Backend* be = backend_;
  const DType act = impl_->act;
  const DeviceKind dev = be->device();
  const ForwardWorkspace& ws = *state->scratch_;
  const ForwardOps ops(be, *impl_->params, c, act, ws, "model step");
  const int64_t H = c.heads, Hkv = c.kv_heads, D = c.head_dim();

  RETURN_IF_ERROR(ops.Embed(row.data(), &impl_->encoded_inputs, state->row_staging()));
  OpDesc rope = ModelOpDesc(Op::kRope, act);
  rope.rope.theta = c.rope_theta;
  rope.rope.rotary_dims = c.rotary_dims;
  rope.rope.position_offset = t;  // absolute position of this row, as in the full forward
  OpDesc decode = ModelOpDesc(Op::kAttentionDecode, act);
  decode.attention.head_dim = static_cast<int>(D);
  const TensorView q = RowHeads(ws.qkv, 0, H, D);
  const TensorView k = RowHeads(ws.qkv, H * D, Hkv, D);
  const TensorView v = RowHeads(ws.qkv, (H + Hkv) * D, Hkv, D);
  const TensorView att4 = MakeView(ws.att.data, act, dev, {1, 1, H, D});
  const size_t kv_row_bytes = static_cast<size_t>(Hkv * D) * DTypeSize(act);
  for (int l = 0; l < c.layers; ++l) {
    const std::string b = absl::StrCat("blocks.", l, ".");
    RETURN_IF_ERROR(ops.QkvProjection(b));
    rope.rope.rotary_dims = c.layer_rotary_dims(l);
    RETURN_IF_ERROR(ops.Run(rope, {q}, {q}, b + "rope(q)"));
    // The rotated key goes straight into cache row t (rope's output may be another
    // tensor); the value is copied there.
    RETURN_IF_ERROR(ops.Run(rope, {k}, {state->KRow(l, t)}, b + "rope(k)"));
    RETURN_IF_ERROR(be->Copy(state->VRow(l, t).data, dev, v.data, dev, kv_row_bytes));
    // The first t+1 rows of the caches: every key this query may see.
    const TensorView kc = MakeView(state->k_cache(l).data, act, dev, {1, t + 1, Hkv, D});
    const TensorView vc = MakeView(state->v_cache(l).data, act, dev, {1, t + 1, Hkv, D});
    RETURN_IF_ERROR(
        ops.Run(decode, {q, kc, vc, state->decode_work()}, {att4}, b + "attention decode"));
    RETURN_IF_ERROR(ops.ProjectionAndMlp(b));
  }
  RETURN_IF_ERROR(ops.HeadProbs(ws.x, ws.h));
  // Into the state's staging without waiting, then the step's one host wait: the
  // upload, every kernel and this download are done after it (Copy to the host would
  // wait on its own, and a Synchronize after it was a second wait).
  float* staged = state->probs_staging();
  RETURN_IF_ERROR(
      be->CopyAsync(staged, DeviceKind::kCpu, ws.probs32.data, dev, ws.probs32.bytes()));
  RETURN_IF_ERROR(be->Synchronize());
  state->Advance();
  return std::vector<float>(staged, staged + c.classes);
}

}  // namespace flashtick
