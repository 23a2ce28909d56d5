// The transformer forward over one batch chunk, every op through Backend::Run:
//   x = embed(ticks);  for each block:  h = LN1(x); qkv = h·Wqkvᵀ + b; RoPE(q), RoPE(k);
//   att = causal_attention(q, k, v); x += att·Wprojᵀ + b; h = LN2(x);
//   x += gelu(h·W1ᵀ + b1)·W2ᵀ + b2;   then probs = softmax(LN_f(x)·Wheadᵀ + b), the
// softmax in fp32 when activations are bf16/f16.
// q, k and v are strided [Bc, T, heads, D] views into the fused QKV buffer (no copies);
// the residual adds are Matmul with beta = 1 into x. Host <-> device traffic is
// Backend::Copy of the ticks in and the probabilities out, nothing else.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/memory_scope.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/param_dtype.h"
#include "kernels/step_shift.h"
#include "model/forward_ops.h"
#include "model/transformer_impl.h"

namespace flashtick {
namespace {

constexpr size_t kAlign = 256;  // buffer alignment: cache lines, and what cuBLASLt likes

struct Carver {
  char* base;
  DeviceKind device;
  size_t offset = 0;
  TensorView Take(DType dt, std::initializer_list<int64_t> shape) {
    offset = (offset + kAlign - 1) / kAlign * kAlign;
    TensorView v = MakeView(base ? base + offset : nullptr, dt, device, shape);
    offset += v.bytes();
    return v;
  }
};

// A [B, T, heads, D] view of columns [col, col + heads·D) of a [B·T, W] buffer.
TensorView HeadsView(const TensorView& buf, int64_t col, int64_t B, int64_t T, int64_t heads,
                     int64_t D) {
  const int64_t W = buf.dim(1);
  TensorView v = MakeView(static_cast<char*>(buf.data) + col * DTypeSize(buf.dtype), buf.dtype,
                          buf.device, {B, T, heads, D});
  v.strides = {T * W, W, D, 1};
  return v;
}

// Row `row` of each of the B sequences of `v` ([B, T, ...] with T as dimension 1, or a
// [B·T, W] buffer): the same view with T = 1, starting at that row.
TensorView RowOfEach(const TensorView& v, int64_t B, int64_t T, int64_t row) {
  TensorView r = v;
  if (v.rank == 2) {  // [B·T, W] rows: a [B, W] view with row stride T·W
    r.shape[0] = B;
    r.strides[0] = T * v.stride(0);
    r.data = static_cast<char*>(v.data) + row * v.stride(0) * DTypeSize(v.dtype);
    return r;
  }
  r.shape[1] = 1;
  r.data = static_cast<char*>(v.data) + row * v.stride(1) * DTypeSize(v.dtype);
  return r;
}

// The first `rows` steps of each sequence of a [B, T, heads, D] view (strides kept).
TensorView FirstSteps(const TensorView& v, int64_t rows) {
  TensorView r = v;
  r.shape[1] = rows;
  return r;
}

}  // namespace

ForwardWorkspace ForwardWorkspace::Carve(void* base, DeviceKind device, const ModelConfig& c,
                                         DType act, int64_t Bc, int64_t T, bool last_only) {
  const int64_t R = Bc * T, C = c.width, D = c.head_dim();
  const int64_t W = (c.heads + 2 * int64_t{c.kv_heads}) * D;
  const int64_t rows_out = last_only ? Bc : R;
  Carver k{static_cast<char*>(base), device};
  ForwardWorkspace w;
  w.in32 = k.Take(DType::kF32, {R, c.input_width()});
  w.in = act == DType::kF32 ? w.in32 : k.Take(act, {R, c.input_width()});
  w.x = k.Take(act, {R, C});
  w.h = k.Take(act, {R, C});
  w.qkv = k.Take(act, {R, W});
  w.kv_shifted = k.Take(act, {c.exclude_self_layers > 0 ? R : 0, 2 * int64_t{c.kv_heads} * D});
  w.att = k.Take(act, {R, C});
  w.mlp = k.Take(act, {R, int64_t{c.mlp_ratio} * C});
  w.mean = k.Take(ParamDType(act), {R});
  w.rstd = k.Take(ParamDType(act), {R});
  w.lse = k.Take(AttentionStatsDType(act), {Bc, c.heads, T});
  w.logits = k.Take(act, {rows_out, c.classes});
  w.probs32 = act == DType::kF32 ? w.logits : k.Take(DType::kF32, {rows_out, c.classes});
  w.bytes = k.offset;
  return w;
}

absl::Status Transformer::Impl::ForwardChunk(const ModelConfig& c, Backend* be, const float* ticks,
                                             int64_t Bc, int64_t T, bool last_only, float* probs,
                                             const std::function<bool()>& stop,
                                             const AttentionProbe& probe, int64_t valid_steps) {
  const DeviceKind dev = be->device();
  // The row whose answer a last-step forward keeps: the last one, or with right
  // padding the last real step (rows after it are padding no earlier row attends to).
  const int64_t answer_row = last_only && valid_steps > 0 ? valid_steps - 1 : T - 1;
  if (answer_row < 0 || answer_row >= T) {
    return absl::InvalidArgumentError(absl::StrCat("forward: ", valid_steps,
                                                   " real steps of a window of ", T));
  }
  ForwardWorkspace ws = ForwardWorkspace::Carve(nullptr, dev, c, act, Bc, T, last_only);
  if (ws.bytes > workspace_capacity) {
    workspace.reset();  // free the old one first: peak memory is the new size, not both
    workspace_capacity = 0;
    // The model keeps the workspace for every later forward: it is not the memory of
    // the request that happens to grow it (each forward counts its part, below).
    const UnscopedAllocations model_owned;
    ASSIGN_OR_RETURN(workspace, be->Allocate(ws.bytes));
    workspace_capacity = ws.bytes;
  }
  // The caller's memory scope (a server request's peak, kernels/memory_scope.h) counts
  // the bytes this chunk carves out of the shared workspace while it runs.
  const BorrowedMemory carved(*be, static_cast<int64_t>(ws.bytes));
  ws = ForwardWorkspace::Carve(workspace.get(), dev, c, act, Bc, T, last_only);
  const ForwardOps ops(be, *params, c, act, ws, "model forward");
  const int64_t C = c.width, H = c.heads, Hkv = c.kv_heads, D = c.head_dim();

  RETURN_IF_ERROR(ops.Embed(ticks, &encoded_inputs));
  OpDesc rope = ModelOpDesc(Op::kRope, act);
  rope.rope.theta = c.rope_theta;
  rope.rope.rotary_dims = c.rotary_dims;
  OpDesc attn = ModelOpDesc(Op::kAttentionFwd, act);
  attn.attention.causal = true;
  const TensorView q = HeadsView(ws.qkv, 0, Bc, T, H, D);
  const TensorView k = HeadsView(ws.qkv, H * D, Bc, T, Hkv, D);
  const TensorView v = HeadsView(ws.qkv, (H + Hkv) * D, Bc, T, Hkv, D);
  const TensorView att4 = MakeView(ws.att.data, act, dev, {Bc, T, H, D});
  OpDesc decode = ModelOpDesc(Op::kAttentionDecode, act);
  decode.attention.head_dim = static_cast<int>(D);
  // A backend without a decode kernel (a test double) runs the last block whole.
  const bool last_step_decode = last_only && T > 1 && !probe && be->Supports(decode);
  for (int l = 0; l < c.layers; ++l) {
    if (stop && l > 0) {
      // The host runs ahead of an asynchronous device: wait for it, so that the
      // question is asked about work actually done, and stop before the next layer.
      RETURN_IF_ERROR(be->Synchronize());
      if (stop()) {
        return absl::CancelledError(absl::StrCat("forward stopped before layer ", l + 1, " of ",
                                                 c.layers, " (nobody waits for it)"));
      }
    }
    const std::string b = absl::StrCat("blocks.", l, ".");
    RETURN_IF_ERROR(ops.QkvProjection(b));
    rope.rope.rotary_dims = c.layer_rotary_dims(l);
    RETURN_IF_ERROR(ops.Run(rope, {q}, {q}, b + "rope(q)"));
    RETURN_IF_ERROR(ops.Run(rope, {k}, {k}, b + "rope(k)"));
    // A layer that excludes the step itself attends over its keys and values one step
    // later (kernels/step_shift.h): row i sees steps 0..i−1 and a zero sink row.
    TensorView kl = k, vl = v;
    if (c.layer_excludes_self(l)) {
      RETURN_IF_ERROR(ShiftStepsLater(*be, ColumnBlock(ws.qkv, H * D, 2 * Hkv * D), ws.kv_shifted, Bc, T));
      kl = HeadsView(ws.kv_shifted, 0, Bc, T, Hkv, D);
      vl = HeadsView(ws.kv_shifted, Hkv * D, Bc, T, Hkv, D);
    }
    if (last_step_decode && l == c.layers - 1) {
      // Only each sequence's last step leaves the last block: its K and V need every
      // row (done above), nothing after them does. Attention runs as the decode of the
      // last query against all T keys (what Transformer::Step runs per tick), and the
      // projection and MLP on B rows instead of B·T. For a 2-layer model this halves
      // a day's attention, the bulk of a forward at N = 23,400 (docs/serving.md,
      // "The last step only"). The attention probe needs every row, so it keeps them.
      // With right padding the query is the last real step and the keys stop at it.
      const int64_t Tk = answer_row + 1;
      RETURN_IF_ERROR(ops.Run(decode,
                              {RowOfEach(q, Bc, T, answer_row), FirstSteps(kl, Tk), FirstSteps(vl, Tk)},
                              {RowOfEach(att4, Bc, T, answer_row)}, b + "attention (last step)"));
      RETURN_IF_ERROR(ops.ProjectionAndMlpRows(b, RowOfEach(ws.att, Bc, T, answer_row),
                                               RowOfEach(ws.x, Bc, T, answer_row)));
      continue;
    }
    RETURN_IF_ERROR(ops.Run(attn, {q, kl, vl}, {att4, ws.lse}, b + "attention"));
    if (probe) RETURN_IF_ERROR(probe(l, q, k, ws.lse));  // the unshifted keys (attention_probe.h)
    RETURN_IF_ERROR(ops.ProjectionAndMlp(b));
  }

  // The head: every step, or only each sequence's answer row (a [Bc, C] view with row
  // stride T·C, so no other row is normalised or projected).
  TensorView xs = ws.x, hs = ws.h;
  if (last_only) {
    xs = RowOfEach(ws.x, Bc, T, answer_row);
    hs = MakeView(ws.h.data, act, dev, {Bc, C});
  }
  RETURN_IF_ERROR(ops.HeadProbs(xs, hs));
  RETURN_IF_ERROR(be->Copy(probs, DeviceKind::kCpu, ws.probs32.data, dev, ws.probs32.bytes()));
  return be->Synchronize();
}

}  // namespace flashtick
