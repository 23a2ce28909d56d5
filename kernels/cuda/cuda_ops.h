// One host launcher per op for the CUDA backend; cuda_backend.cc dispatches to
// them. Host-visible (compiles without nvcc). Launchers validate shapes, dtypes
// and alignment on the host and turn CUDA errors into absl::Status, so kernels
// carry no runtime checks for bad input.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

// Opaque handles so this header does not need cuda_runtime.h.
typedef struct CUstream_st* cudaStream_t;
typedef struct cublasLtContext* cublasLtHandle_t;

namespace flashtick::cuda {

struct CudaContext {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  void* workspace = nullptr;  // cuBLASLt workspace
  size_t workspace_bytes = 0;
  int sm = 0;                 // compute capability ×10 (80, 90)
  int num_sms = 0;
  // Key splits of the attention forward: 0 lets the launcher choose (FlashFwdNumSplits);
  // k ≥ 1 fixes k (1: never split), capped at kMaxSplits. From
  // BackendOptions::attention_fwd_splits, for benchmarks.
  int fwd_splits = 0;
  // BackendOptions::deterministic: the attention backward must be bitwise repeatable.
  bool deterministic = false;
  // Stream-ordered scratch device memory for launchers that need temporaries (row
  // statistics, partial sums): freed on `stream` when the pointer is released, so it
  // may be dropped right after the kernels using it are enqueued. Counts toward the
  // backend's used/peak memory; out of memory is ResourceExhausted.
  std::function<absl::StatusOr<std::shared_ptr<void>>(size_t bytes)> scratch;
};

using In = absl::Span<const TensorView>;
using Out = absl::Span<const TensorView>;

#define FT_CUDA_OP(Name) absl::Status Name(const OpDesc& desc, In in, Out out, CudaContext& ctx)
// kernels/cuda/attention/: the attention forward and backward pick, per shape bucket,
// our Flash kernels or cuDNN's fused SDPA (attention_dispatch_cuda.cc,
// kernels/attention_dispatch.h); the backward-over-backward and decode are ours.
FT_CUDA_OP(AttentionFwd);
FT_CUDA_OP(AttentionBwd);
// Our Flash kernels alone (FlashAttention-2 design).
FT_CUDA_OP(FlashAttentionFwd);
FT_CUDA_OP(FlashAttentionBwd);
// cuDNN's SDPA through the cudnn-frontend graph API (cudnn_sdpa.cc), same contract as
// ours; Unimplemented in a build without cuDNN or for a shape cuDNN refuses.
FT_CUDA_OP(CudnnAttentionFwd);
FT_CUDA_OP(CudnnAttentionBwd);
FT_CUDA_OP(AttentionBwdBwd);
FT_CUDA_OP(AttentionDecode);
// kernels/cuda/<op>.cu|.cc: every other op (cuBLASLt for Matmul)
FT_CUDA_OP(Matmul);
FT_CUDA_OP(AddBias);
FT_CUDA_OP(BiasGrad);
FT_CUDA_OP(Add);
FT_CUDA_OP(Cast);
FT_CUDA_OP(LayerNorm);
FT_CUDA_OP(LayerNormBwd);
FT_CUDA_OP(LayerNormBwdBwd);
FT_CUDA_OP(Gelu);
FT_CUDA_OP(GeluBwd);
FT_CUDA_OP(GeluBwdBwd);
FT_CUDA_OP(Softmax);
FT_CUDA_OP(Rope);
FT_CUDA_OP(KvCacheWrite);  // kv_cache_write.cu
FT_CUDA_OP(SoftmaxCrossEntropy);
FT_CUDA_OP(SoftmaxCrossEntropyBwd);
FT_CUDA_OP(SoftmaxCrossEntropyBwdBwd);
FT_CUDA_OP(AdamW);
FT_CUDA_OP(SophiaH);
FT_CUDA_OP(Rademacher);    // hutchinson: Philox Rademacher probes
FT_CUDA_OP(ProbeProduct);
#undef FT_CUDA_OP

// Whether the attention mode is flash_sm90a (kernels/attention_dispatch.h): our forward
// and backward launchers then run the sm_90a wgmma kernels where they can
// (attention_{fwd,bwd}_launch.cc).
bool FlashSm90aAsked();
// Whether the backward-over-backward runs its sm_90a wgmma passes (sm90/bob_sm90.cuh) for
// this kernel head dim, dtype and compute capability: wherever they run, unless the mode
// is flash. The launcher and KernelPath both ask this, so the name follows what runs.
bool BobSm90Chosen(int kernel_head_dim, DType dtype, int sm);

// The kernel variant our Flash launchers run, e.g. "flash_cuda_fwd_d64_m128n128w4_splitkv_sm90".
std::string AttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx);

// cuDNN SDPA (cudnn_sdpa.cc). Built: the binary was compiled with the cuDNN backend.
bool CudnnAttentionBuilt();
// cudnnGetVersion() (e.g. 91900), or 0 without cuDNN.
int64_t CudnnAttentionVersion();
// Validates the op's tensors and builds (once per shape, strides and dtype; cached)
// the cuDNN graph for it. OK: CudnnAttentionFwd/Bwd will run these tensors.
absl::Status CudnnAttentionPrepare(const OpDesc& desc, In in, Out out, CudaContext& ctx);
// e.g. "cudnn_sdpa_fwd_d64_sm90_v91900"; "cudnn_sdpa_unavailable" without cuDNN.
std::string CudnnAttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx);

// The kernel path AttentionFwd/AttentionBwd run for `desc` under the current
// implementation choice: ours, cuDNN's, or (auto, before any call of this op, dtype,
// head dim and masking has been decided) "attention_auto(<ours>|<cudnn>)".
std::string DispatchedAttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx);

}  // namespace flashtick::cuda
