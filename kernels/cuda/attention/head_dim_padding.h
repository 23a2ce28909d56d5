// Head dims without a kernel of their own (16, 32, 96) run on the next kernel that
// exists (64 or 128) with the extra columns zero. Attention touches D only through
// inner products and row-wise linear maps, and zero columns change neither:
//   q·k over Dp columns = q·k over D when q or k is zero past D, so S, P, L are exact;
//   O = P V, dQ = scale·dS K, dK = scale·dSᵀ Q, dV = Pᵀ dO, D_i = Σ dO∘O and every
//   term of the backward-over-backward are linear in a zero-padded operand, so their
//   first D columns are the unpadded results and the rest are zero
// (docs/kernels/head_dims.md). The scale stays 1/sqrt(D) of the real head dim.
// The cost is the copies (O(N·D), against attention's O(N²·D)) and the kernel's
// Dp/D extra work; decode has native kernels for every head dim and needs none.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

// Which head dims run, and on which kernel: flash::FlashKernelHeadDim (flash_host.h).

using AttentionOpFn = absl::Status (*)(const OpDesc&, In, Out, CudaContext&);

// Runs `fn` on zero-padded copies: every rank-4 [B, T, heads, D] input is copied into
// a contiguous [B, T, heads, Dp] scratch tensor with zero columns past D, every rank-4
// output is computed into such a tensor and its first D columns copied back (row
// statistics, rank 3, pass through). `fn` gets head_dim Dp and the scale of D.
absl::Status RunWithPaddedHeadDim(const OpDesc& desc, In in, Out out, CudaContext& ctx,
                                  int64_t D, AttentionOpFn fn);

// The copy kernel (head_dim_copy.cu): dst[b, t, h, c] = c < src_cols ? src[b, t, h, c]
// : 0 for c < dst_cols, 16-bit elements, strides in elements.
struct HeadDimCopyParams {
  const uint16_t* src = nullptr;
  int64_t src_b = 0, src_t = 0, src_h = 0;
  uint16_t* dst = nullptr;
  int64_t dst_b = 0, dst_t = 0, dst_h = 0;
  int64_t B = 0, T = 0, H = 0;
  int src_cols = 0, dst_cols = 0;
};
absl::Status LaunchHeadDimCopy(const HeadDimCopyParams& p, cudaStream_t stream);

}  // namespace flashtick::cuda
