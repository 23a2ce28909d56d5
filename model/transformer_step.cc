// Transformer::Step: one new tick through the model against a DecodeState's K/V cache.
// Same math and ops as the full forward (model/transformer_forward.cc), for one row at
// position t = state->steps():
//   x = embed(row);  per block: h = LN1(x); qkv = h·Wqkvᵀ + b; q = RoPE_t(q);
//   Kcache[t] = RoPE_t(k); Vcache[t] = v; att = decode(q, Kcache[0..t], Vcache[0..t]);
//   x += att·Wprojᵀ + b; h = LN2(x); x += gelu(h·W1ᵀ + b1)·W2ᵀ + b2
//   probs = softmax(LN_f(x)·Wheadᵀ + b)
// Causal attention of row t over rows 0..t is exactly decode against the first t+1
// cached rows (in a layer that excludes the step itself: the zero sink row and steps
// 0..t−1, the cache being one row later; decode_state.h), and RoPE at absolute
// position t rotates k as the full forward does, so the probabilities equal row t of
// Predict. Cost per step: O(t·C) attention + O(C²) matmuls. Per step the host waits
// once (the Synchronize before reading the probabilities); the row and the position go
// up in one copy and the probabilities come down through the state's host staging
// (pinned on CUDA), and the step allocates no device memory while the cache has room.
// The position t reaches the device only through memory (rope's position input,
// kv_cache_write's row, decode's kv_length over the whole cache), never through an op's
// arguments, so the device work of step t + 1 is the same call sequence as step t's:
// with DecodeOptions::capture it is recorded once per cache capacity and replayed
// (a CUDA graph on the GPU; docs/serving.md, "Decode graphs").
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/param_dtype.h"
#include "model/decode_state.h"
#include "model/forward_ops.h"
#include "model/input_encoding.h"
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
  RETURN_IF_ERROR(state->Reserve(t + 1 + DecodeState::SinkRows(c)));
  Backend* be = backend_;
  const DType act = impl_->act;
  const DeviceKind dev = be->device();
  const ForwardWorkspace& ws = *state->scratch_;
  const ForwardOps ops(be, *impl_->params, c, act, ws, "model step");
  const int64_t H = c.heads, Hkv = c.kv_heads, D = c.head_dim();

  // The host half: the row (encoded) and the step's position into the staging.
  const float* rows = InputRows(c, row.data(), 1, &impl_->encoded_inputs);
  std::memcpy(state->row_staging(), rows, ws.in32.bytes());
  state->positions_staging()[0] = static_cast<int32_t>(t);
  state->positions_staging()[1] = static_cast<int32_t>(t + 1);

  // The device half names the position only through device memory, so its ops and
  // arguments are the same at every step while the cache keeps its capacity.
  OpDesc rope = ModelOpDesc(Op::kRope, act);
  rope.rope.theta = c.rope_theta;
  OpDesc decode = ModelOpDesc(Op::kAttentionDecode, act);
  decode.attention.head_dim = static_cast<int>(D);
  const OpDesc cache_write = ModelOpDesc(Op::kKvCacheWrite, act);
  const TensorView qk = RowHeads(ws.qkv, 0, H + Hkv, D);  // q and k: one rotation
  const TensorView q = RowHeads(ws.qkv, 0, H, D);
  const TensorView k = RowHeads(ws.qkv, H * D, Hkv, D);
  const TensorView v = RowHeads(ws.qkv, (H + Hkv) * D, Hkv, D);
  const TensorView att4 = MakeView(ws.att.data, act, dev, {1, 1, H, D});
  const TensorView position = state->position_view();
  const TensorView kv_length = state->kv_length_view();
  auto enqueue = [&]() -> absl::Status {
    RETURN_IF_ERROR(be->CopyAsync(state->upload_device(), dev, state->row_staging(),
                                  DeviceKind::kCpu, state->upload_bytes()));
    RETURN_IF_ERROR(ops.EmbedUploaded());
    for (int l = 0; l < c.layers; ++l) {
      const std::string b = absl::StrCat("blocks.", l, ".");
      RETURN_IF_ERROR(ops.QkvProjection(b));
      // RoPE at absolute position t (position[0]) on q and k together, in place.
      rope.rope.rotary_dims = c.layer_rotary_dims(l);
      RETURN_IF_ERROR(ops.Run(rope, {qk, position}, {qk}, b + "rope(q, k)"));
      const TensorView& kc = state->k_cache(l);
      const TensorView& vc = state->v_cache(l);
      // A layer that excludes the step itself keeps step t in row t + 1, after its zero
      // sink row (decode_state.h): the row index is then kv_length's t + 1, and this
      // step's decode over rows [0, t] reads the sink and steps 0..t − 1 only.
      const TensorView& row = c.layer_excludes_self(l) ? kv_length : position;
      RETURN_IF_ERROR(ops.Run(cache_write, {k, v, row}, {kc, vc}, b + "kv cache write"));
      // The whole cache with kv_length = t + 1: every key this query may see.
      RETURN_IF_ERROR(ops.Run(decode, {q, kc, vc, state->decode_work(), kv_length}, {att4},
                              b + "attention decode"));
      RETURN_IF_ERROR(ops.ProjectionAndMlp(b));
    }
    RETURN_IF_ERROR(ops.HeadProbs(ws.x, ws.h));
    // Into the state's staging without waiting: the step's one host wait follows.
    return be->CopyAsync(state->probs_staging(), DeviceKind::kCpu, ws.probs32.data, dev,
                         ws.probs32.bytes());
  };
  if (state->capture_ && (state->capture_work_ == nullptr ||
                          state->capture_capacity_ != state->capacity())) {
    // Capture once per capacity: growing the cache moved it. A capture that fails
    // (an op the backend cannot record) turns capture off; the step then runs op by op.
    // A backend busy with another model's capture (FailedPrecondition from BeginCapture:
    // a server's models share one backend) is not a failure: this step runs op by op and
    // the next one tries again.
    state->capture_work_.reset();
    absl::Status captured = be->BeginCapture();
    if (captured.ok()) {
      captured = enqueue();
      absl::StatusOr<std::unique_ptr<CapturedWork>> work = be->EndCapture();
      if (captured.ok()) captured = work.status();
      if (captured.ok()) {
        state->capture_work_ = *std::move(work);
        state->capture_capacity_ = state->capacity();
        ++state->captures_;
      } else {
        state->capture_ = false;
        state->capture_error_ = captured;
      }
    } else if (captured.code() != absl::StatusCode::kFailedPrecondition) {
      state->capture_ = false;
      state->capture_error_ = captured;
    }
  }
  if (state->capture_ && state->capture_work_ != nullptr)
    RETURN_IF_ERROR(be->Replay(*state->capture_work_));
  else
    RETURN_IF_ERROR(enqueue());
  // The step's one host wait: the upload, every kernel and the download are done after
  // it (Copy to the host would wait on its own, and a Synchronize after it was a second).
  RETURN_IF_ERROR(be->Synchronize());
  state->Advance();
  const float* staged = state->probs_staging();
  return std::vector<float>(staged, staged + c.classes);
}

}  // namespace flashtick
