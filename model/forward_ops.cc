// The steps shared by the full forward and the one-tick decode (see forward_ops.h).
#include "model/forward_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/input_encoding.h"

namespace flashtick {

OpDesc ModelOpDesc(Op op, DType dtype) {
  OpDesc d;
  d.op = op;
  d.dtype = dtype;
  return d;
}

absl::Status ForwardOps::Run(const OpDesc& d, std::initializer_list<TensorView> in,
                             std::initializer_list<TensorView> out,
                             const std::string& where) const {
  absl::Status s = be_->Run(d, absl::Span<const TensorView>(in.begin(), in.size()),
                            absl::Span<const TensorView>(out.begin(), out.size()));
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(pass_, ", ", where, ": ", s.message()));
  return s;
}

namespace {

OpDesc LinearDesc(DType act, bool accumulate) {
  OpDesc mm = ModelOpDesc(Op::kMatmul, act);
  mm.matmul.trans_b = true;
  mm.matmul.beta = accumulate ? 1.0f : 0.0f;
  mm.matmul.bias = true;
  return mm;
}

}  // namespace

absl::Status ForwardOps::Linear(const TensorView& x, const std::string& name, const TensorView& y,
                                bool accumulate) const {
  // One op, the bias in the GEMM's epilogue: a separate kAddBias pass over y cost as
  // much GPU time as the matmul (docs/serving.md, the per-op profile), and on the GPU
  // y is rounded to bf16 once instead of twice (the CPU's result is unchanged:
  // kernels/ops/matmul.h).
  return Run(LinearDesc(act_, accumulate),
             {x, p_.compute(name + ".weight"), p_.compute(name + ".bias")}, {y}, name);
}

absl::Status ForwardOps::LinearGelu(const TensorView& x, const std::string& name,
                                    const TensorView& y) const {
  OpDesc mm = LinearDesc(act_, false);
  mm.matmul.gelu = true;
  return Run(mm, {x, p_.compute(name + ".weight"), p_.compute(name + ".bias")}, {y},
             name + " (with gelu)");
}

absl::Status ForwardOps::LayerNorm(const TensorView& x, const std::string& name,
                                   const TensorView& y) const {
  OpDesc d = ModelOpDesc(Op::kLayerNorm, act_);
  d.layernorm.eps = c_.layernorm_eps;
  const int64_t rows = y.numel() / c_.width;
  TensorView mean = ws_.mean, rstd = ws_.rstd;
  mean.shape[0] = rstd.shape[0] = rows;
  return Run(d, {x, p_.compute(name + ".weight"), p_.compute(name + ".bias")}, {y, mean, rstd},
             name);
}

absl::Status ForwardOps::Embed(const float* ticks, std::vector<float>* encode_buffer) const {
  // Encoded columns are made on the host (model/input_encoding.h), then one copy.
  const float* rows = InputRows(c_, ticks, ws_.in32.dim(0), encode_buffer);
  RETURN_IF_ERROR(
      be_->Copy(ws_.in32.data, be_->device(), rows, DeviceKind::kCpu, ws_.in32.bytes()));
  return EmbedUploaded();
}

absl::Status ForwardOps::EmbedUploaded() const {
  if (act_ != DType::kF32)
    RETURN_IF_ERROR(Run(ModelOpDesc(Op::kCast, DType::kF32), {ws_.in32}, {ws_.in}, "ticks cast"));
  return Linear(ws_.in, "embed", ws_.x, false);
}

absl::Status ForwardOps::QkvProjection(const std::string& block) const {
  RETURN_IF_ERROR(LayerNorm(ws_.x, block + "ln1", ws_.h));
  return Linear(ws_.h, block + "attn.qkv", ws_.qkv, false);
}

absl::Status ForwardOps::ProjectionAndMlp(const std::string& block) const {
  return ProjectionAndMlpRows(block, ws_.att, ws_.x);
}

absl::Status ForwardOps::ProjectionAndMlpRows(const std::string& block, const TensorView& att,
                                              const TensorView& x) const {
  const int64_t rows = x.dim(0);
  TensorView h = ws_.h, mlp = ws_.mlp;
  h.shape[0] = mlp.shape[0] = rows;  // the first rows: contiguous, whatever x's stride
  RETURN_IF_ERROR(Linear(att, block + "attn.proj", x, true));
  RETURN_IF_ERROR(LayerNorm(x, block + "ln2", h));
  RETURN_IF_ERROR(LinearGelu(h, block + "mlp.fc1", mlp));
  return Linear(mlp, block + "mlp.fc2", x, true);
}

absl::Status ForwardOps::HeadProbs(const TensorView& xs, const TensorView& hs) const {
  RETURN_IF_ERROR(LayerNorm(xs, "ln_f", hs));
  RETURN_IF_ERROR(Linear(hs, "head", ws_.logits, false));
  if (act_ == DType::kBF16 || act_ == DType::kF16) {
    // Softmax in fp32: bf16 probabilities would carry only ~3 significant digits.
    RETURN_IF_ERROR(
        Run(ModelOpDesc(Op::kCast, act_), {ws_.logits}, {ws_.probs32}, "logits cast"));
    return Run(ModelOpDesc(Op::kSoftmax, DType::kF32), {ws_.probs32}, {ws_.probs32}, "softmax");
  }
  RETURN_IF_ERROR(Run(ModelOpDesc(Op::kSoftmax, act_), {ws_.logits}, {ws_.logits}, "softmax"));
  if (act_ != DType::kF32)
    return Run(ModelOpDesc(Op::kCast, act_), {ws_.logits}, {ws_.probs32}, "probs cast");
  return absl::OkStatus();
}

}  // namespace flashtick
