// Names of ops, for logs, parity-test lines and kernel-path reports.
#include "kernels/ops/op_desc.h"

#include "absl/strings/str_cat.h"

namespace flashtick {

const char* OpName(Op op) {
  switch (op) {
    case Op::kMatmul: return "matmul";
    case Op::kAddBias: return "add_bias";
    case Op::kBiasGrad: return "bias_grad";
    case Op::kAdd: return "add";
    case Op::kCast: return "cast";
    case Op::kLayerNorm: return "layernorm";
    case Op::kLayerNormBwd: return "layernorm_bwd";
    case Op::kLayerNormBwdBwd: return "layernorm_bwd_bwd";
    case Op::kGelu: return "gelu";
    case Op::kGeluBwd: return "gelu_bwd";
    case Op::kGeluBwdBwd: return "gelu_bwd_bwd";
    case Op::kSoftmax: return "softmax";
    case Op::kRope: return "rope";
    case Op::kKvCacheWrite: return "kv_cache_write";
    case Op::kAttentionFwd: return "attention_fwd";
    case Op::kAttentionBwd: return "attention_bwd";
    case Op::kAttentionBwdBwd: return "attention_bwd_bwd";
    case Op::kAttentionDecode: return "attention_decode";
    case Op::kSoftmaxCrossEntropy: return "softmax_cross_entropy";
    case Op::kSoftmaxCrossEntropyBwd: return "softmax_cross_entropy_bwd";
    case Op::kSoftmaxCrossEntropyBwdBwd: return "softmax_cross_entropy_bwd_bwd";
    case Op::kAdamW: return "adamw";
    case Op::kSophiaH: return "sophia_h";
    case Op::kRademacher: return "rademacher";
    case Op::kProbeProduct: return "probe_product";
  }
  return "unknown";
}

std::string OpDesc::DebugString() const {
  std::string s = absl::StrCat(OpName(op), "(", DTypeName(dtype));
  switch (op) {
    case Op::kMatmul:
      absl::StrAppend(&s, ", ta=", matmul.trans_a, ", tb=", matmul.trans_b);
      if (matmul.bias) absl::StrAppend(&s, ", bias=1");
      if (matmul.gelu) absl::StrAppend(&s, ", gelu=1");
      break;
    case Op::kAttentionFwd:
    case Op::kAttentionBwd:
    case Op::kAttentionBwdBwd:
      absl::StrAppend(&s, ", causal=", attention.causal);
      break;
    default:
      break;
  }
  return absl::StrCat(s, ")");
}

}  // namespace flashtick
