// One function per op for the CPU reference backend; cpu_backend.cc dispatches to
// them. Each lives in kernels/cpu/<op>.cc beside the op's contract in kernels/ops/.
// CPU dtypes: f32 and f64 (accumulation in f64 where it matters for the oracle).
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick::cpu {

struct CpuContext {
  ThreadPool* pool = nullptr;
};

using In = absl::Span<const TensorView>;
using Out = absl::Span<const TensorView>;

#define FT_CPU_OP(Name) absl::Status Name(const OpDesc& desc, In in, Out out, CpuContext& ctx)
FT_CPU_OP(Matmul);
FT_CPU_OP(AddBias);
FT_CPU_OP(BiasGrad);
FT_CPU_OP(Add);
FT_CPU_OP(Cast);
FT_CPU_OP(LayerNorm);
FT_CPU_OP(LayerNormBwd);
FT_CPU_OP(LayerNormBwdBwd);
FT_CPU_OP(Gelu);
FT_CPU_OP(GeluBwd);
FT_CPU_OP(GeluBwdBwd);
FT_CPU_OP(Softmax);
FT_CPU_OP(Rope);
FT_CPU_OP(KvCacheWrite);      // kernels/cpu/kv_cache_write.cc
FT_CPU_OP(AttentionFwd);      // kernels/cpu/attention_fwd.cc (tiled, online softmax)
FT_CPU_OP(AttentionBwd);      // kernels/cpu/attention_bwd.cc
FT_CPU_OP(AttentionBwdBwd);   // kernels/cpu/attention_bwd_bwd.cc
FT_CPU_OP(AttentionDecode);   // kernels/cpu/attention_decode.cc
FT_CPU_OP(SoftmaxCrossEntropy);
FT_CPU_OP(SoftmaxCrossEntropyBwd);
FT_CPU_OP(SoftmaxCrossEntropyBwdBwd);
FT_CPU_OP(AdamW);
FT_CPU_OP(SophiaH);
FT_CPU_OP(Rademacher);    // hutchinson: Philox Rademacher probes
FT_CPU_OP(ProbeProduct);
#undef FT_CPU_OP

}  // namespace flashtick::cpu
