// RunOpFunction: the one switch from desc.op to a backend's function for that op,
// shared by the CPU and CUDA backends. Each backend declares one function per op,
// named after its Op enumerator (Matmul for Op::kMatmul) and taking the backend's own
// context type, in the backend's namespace (kernels/cpu/cpu_ops.h,
// kernels/cuda/cuda_ops.h). The unqualified calls below find them by
// argument-dependent lookup on `Context`, so a backend lacking an op's function fails
// to compile here rather than at run time.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

// `backend` names the backend in the error for an op outside the enum.
template <typename Context>
absl::Status RunOpFunction(const char* backend, const OpDesc& desc,
                           absl::Span<const TensorView> inputs,
                           absl::Span<const TensorView> outputs, Context& ctx) {
  switch (desc.op) {
    case Op::kMatmul: return Matmul(desc, inputs, outputs, ctx);
    case Op::kAddBias: return AddBias(desc, inputs, outputs, ctx);
    case Op::kBiasGrad: return BiasGrad(desc, inputs, outputs, ctx);
    case Op::kAdd: return Add(desc, inputs, outputs, ctx);
    case Op::kCast: return Cast(desc, inputs, outputs, ctx);
    case Op::kLayerNorm: return LayerNorm(desc, inputs, outputs, ctx);
    case Op::kLayerNormBwd: return LayerNormBwd(desc, inputs, outputs, ctx);
    case Op::kLayerNormBwdBwd: return LayerNormBwdBwd(desc, inputs, outputs, ctx);
    case Op::kGelu: return Gelu(desc, inputs, outputs, ctx);
    case Op::kGeluBwd: return GeluBwd(desc, inputs, outputs, ctx);
    case Op::kGeluBwdBwd: return GeluBwdBwd(desc, inputs, outputs, ctx);
    case Op::kSoftmax: return Softmax(desc, inputs, outputs, ctx);
    case Op::kRope: return Rope(desc, inputs, outputs, ctx);
    case Op::kKvCacheWrite: return KvCacheWrite(desc, inputs, outputs, ctx);
    case Op::kAttentionFwd: return AttentionFwd(desc, inputs, outputs, ctx);
    case Op::kAttentionBwd: return AttentionBwd(desc, inputs, outputs, ctx);
    case Op::kAttentionBwdBwd: return AttentionBwdBwd(desc, inputs, outputs, ctx);
    case Op::kAttentionDecode: return AttentionDecode(desc, inputs, outputs, ctx);
    case Op::kSoftmaxCrossEntropy: return SoftmaxCrossEntropy(desc, inputs, outputs, ctx);
    case Op::kSoftmaxCrossEntropyBwd: return SoftmaxCrossEntropyBwd(desc, inputs, outputs, ctx);
    case Op::kSoftmaxCrossEntropyBwdBwd:
      return SoftmaxCrossEntropyBwdBwd(desc, inputs, outputs, ctx);
    case Op::kAdamW: return AdamW(desc, inputs, outputs, ctx);
    case Op::kSophiaH: return SophiaH(desc, inputs, outputs, ctx);
    case Op::kRademacher: return Rademacher(desc, inputs, outputs, ctx);
    case Op::kProbeProduct: return ProbeProduct(desc, inputs, outputs, ctx);
  }
  return absl::UnimplementedError(absl::StrCat(backend, ": unknown op ", OpName(desc.op)));
}

}  // namespace flashtick
