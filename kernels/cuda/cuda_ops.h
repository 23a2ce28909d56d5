// One host launcher per op for the CUDA backend; cuda_backend.cc dispatches to
// them. Host-visible (compiles without nvcc). Launchers validate shapes, dtypes
// and alignment on the host and turn CUDA errors into absl::Status, so kernels
// carry no runtime checks for bad input.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
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
};

using In = absl::Span<const TensorView>;
using Out = absl::Span<const TensorView>;

#define FT_CUDA_OP(Name) absl::Status Name(const OpDesc& desc, In in, Out out, CudaContext& ctx)
// kernels/cuda/attention/: our Flash kernels (FlashAttention-2 design)
FT_CUDA_OP(AttentionFwd);
FT_CUDA_OP(AttentionBwd);
FT_CUDA_OP(AttentionBwdBwd);
FT_CUDA_OP(AttentionDecode);
#undef FT_CUDA_OP

// The kernel variant the attention launchers pick for a shape, e.g. "flash_cuda_sm80_d64".
std::string AttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx);

}  // namespace flashtick::cuda
