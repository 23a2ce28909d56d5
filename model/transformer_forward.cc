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
#include "kernels/ops/attention.h"
#include "kernels/ops/param_dtype.h"
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

OpDesc Desc(Op op, DType dt) {
  OpDesc d;
  d.op = op;
  d.dtype = dt;
  return d;
}

// A [B, T, heads, D] view of columns [col, col + heads·D) of a [B·T, W] buffer.
TensorView HeadsView(const TensorView& buf, int64_t col, int64_t B, int64_t T, int64_t heads,
                     int64_t D) {
  const int64_t W = buf.dim(1);
  TensorView v = MakeView(static_cast<char*>(buf.data) + col * DTypeSize(buf.dtype), buf.dtype,
                          buf.device, {B, T, heads, D});
  v.strides = {T * W, W, D, 1};
  return v;
}

// Runs one op; names it in the error so a failure deep in the forward is findable.
absl::Status RunOp(Backend* be, const OpDesc& d, std::initializer_list<TensorView> in,
                   std::initializer_list<TensorView> out, const std::string& where) {
  absl::Status s = be->Run(d, absl::Span<const TensorView>(in.begin(), in.size()),
                           absl::Span<const TensorView>(out.begin(), out.size()));
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("model forward, ", where, ": ", s.message()));
  return s;
}

}  // namespace

ForwardWorkspace ForwardWorkspace::Carve(void* base, DeviceKind device, const ModelConfig& c,
                                         DType act, int64_t Bc, int64_t T, bool last_only) {
  const int64_t R = Bc * T, C = c.width, D = c.head_dim();
  const int64_t W = (c.heads + 2 * int64_t{c.kv_heads}) * D;
  const int64_t rows_out = last_only ? Bc : R;
  Carver k{static_cast<char*>(base), device};
  ForwardWorkspace w;
  w.in32 = k.Take(DType::kF32, {R, c.features});
  w.in = act == DType::kF32 ? w.in32 : k.Take(act, {R, c.features});
  w.x = k.Take(act, {R, C});
  w.h = k.Take(act, {R, C});
  w.qkv = k.Take(act, {R, W});
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
                                             int64_t Bc, int64_t T, bool last_only, float* probs) {
  const DeviceKind dev = be->device();
  ForwardWorkspace ws = ForwardWorkspace::Carve(nullptr, dev, c, act, Bc, T, last_only);
  if (ws.bytes > workspace_capacity) {
    workspace.reset();  // free the old one first: peak memory is the new size, not both
    workspace_capacity = 0;
    ASSIGN_OR_RETURN(workspace, be->Allocate(ws.bytes));
    workspace_capacity = ws.bytes;
  }
  ws = ForwardWorkspace::Carve(workspace.get(), dev, c, act, Bc, T, last_only);
  const DeviceParams& p = *params;
  const int64_t C = c.width, H = c.heads, Hkv = c.kv_heads, D = c.head_dim();

  // y = x·Wᵀ + b, or y += x·Wᵀ + b (the residual add) when accumulate.
  auto linear = [&](const TensorView& x, const std::string& name, const TensorView& y,
                    bool accumulate) -> absl::Status {
    OpDesc mm = Desc(Op::kMatmul, act);
    mm.matmul.trans_b = true;
    mm.matmul.beta = accumulate ? 1.0f : 0.0f;
    RETURN_IF_ERROR(RunOp(be, mm, {x, p.compute(name + ".weight")}, {y}, name));
    return RunOp(be, Desc(Op::kAddBias, act), {y, p.compute(name + ".bias")}, {y}, name + ".bias");
  };
  auto layernorm = [&](const TensorView& x, const std::string& name, const TensorView& y) {
    OpDesc d = Desc(Op::kLayerNorm, act);
    d.layernorm.eps = c.layernorm_eps;
    const int64_t rows = y.numel() / C;
    TensorView mean = ws.mean, rstd = ws.rstd;
    mean.shape[0] = rstd.shape[0] = rows;
    return RunOp(be, d, {x, p.compute(name + ".weight"), p.compute(name + ".bias")},
                 {y, mean, rstd}, name);
  };

  RETURN_IF_ERROR(be->Copy(ws.in32.data, dev, ticks, DeviceKind::kCpu, ws.in32.bytes()));
  if (act != DType::kF32)
    RETURN_IF_ERROR(RunOp(be, Desc(Op::kCast, DType::kF32), {ws.in32}, {ws.in}, "ticks cast"));
  RETURN_IF_ERROR(linear(ws.in, "embed", ws.x, false));

  OpDesc rope = Desc(Op::kRope, act);
  rope.rope.theta = c.rope_theta;
  OpDesc attn = Desc(Op::kAttentionFwd, act);
  attn.attention.causal = true;
  const TensorView q = HeadsView(ws.qkv, 0, Bc, T, H, D);
  const TensorView k = HeadsView(ws.qkv, H * D, Bc, T, Hkv, D);
  const TensorView v = HeadsView(ws.qkv, (H + Hkv) * D, Bc, T, Hkv, D);
  const TensorView att4 = MakeView(ws.att.data, act, dev, {Bc, T, H, D});
  for (int l = 0; l < c.layers; ++l) {
    const std::string b = absl::StrCat("blocks.", l, ".");
    RETURN_IF_ERROR(layernorm(ws.x, b + "ln1", ws.h));
    RETURN_IF_ERROR(linear(ws.h, b + "attn.qkv", ws.qkv, false));
    RETURN_IF_ERROR(RunOp(be, rope, {q}, {q}, b + "rope(q)"));
    RETURN_IF_ERROR(RunOp(be, rope, {k}, {k}, b + "rope(k)"));
    RETURN_IF_ERROR(RunOp(be, attn, {q, k, v}, {att4, ws.lse}, b + "attention"));
    RETURN_IF_ERROR(linear(ws.att, b + "attn.proj", ws.x, true));
    RETURN_IF_ERROR(layernorm(ws.x, b + "ln2", ws.h));
    RETURN_IF_ERROR(linear(ws.h, b + "mlp.fc1", ws.mlp, false));
    RETURN_IF_ERROR(RunOp(be, Desc(Op::kGelu, act), {ws.mlp}, {ws.mlp}, b + "gelu"));
    RETURN_IF_ERROR(linear(ws.mlp, b + "mlp.fc2", ws.x, true));
  }

  // The head: every step, or only each sequence's last step (a [Bc, C] view with row
  // stride T·C, so no other row is normalised or projected).
  TensorView xs = ws.x, hs = ws.h;
  if (last_only) {
    xs = MakeView(static_cast<char*>(ws.x.data) + (T - 1) * C * DTypeSize(act), act, dev, {Bc, C});
    xs.strides[0] = T * C;
    hs = MakeView(ws.h.data, act, dev, {Bc, C});
  }
  RETURN_IF_ERROR(layernorm(xs, "ln_f", hs));
  RETURN_IF_ERROR(linear(hs, "head", ws.logits, false));
  if (act == DType::kBF16 || act == DType::kF16) {
    // Softmax in fp32: bf16 probabilities would carry only ~3 significant digits.
    RETURN_IF_ERROR(RunOp(be, Desc(Op::kCast, act), {ws.logits}, {ws.probs32}, "logits cast"));
    RETURN_IF_ERROR(RunOp(be, Desc(Op::kSoftmax, DType::kF32), {ws.probs32}, {ws.probs32}, "softmax"));
  } else {
    RETURN_IF_ERROR(RunOp(be, Desc(Op::kSoftmax, act), {ws.logits}, {ws.logits}, "softmax"));
    if (act != DType::kF32)
      RETURN_IF_ERROR(RunOp(be, Desc(Op::kCast, act), {ws.logits}, {ws.probs32}, "probs cast"));
  }
  RETURN_IF_ERROR(be->Copy(probs, DeviceKind::kCpu, ws.probs32.data, dev, ws.probs32.bytes()));
  return be->Synchronize();
}

}  // namespace flashtick
