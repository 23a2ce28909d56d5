// Matmul: C = alpha·op(A)·op(B) + beta·C, the GEMM of BLAS. Every linear layer of
// the model is one Matmul: y = x·Wᵀ is (A = x [M, C_in], B = W [C_out, C_in], trans_b).
//   op(A) = A or Aᵀ (attrs.trans_a): op(A) is [M, K], so A is [M, K] or [K, M]
//   op(B) = B or Bᵀ (attrs.trans_b): op(B) is [K, N], so B is [K, N] or [N, K]
//   C [M, N];  C_mn = alpha·Σ_k op(A)_mk·op(B)_kn + beta·C_mn
// Inputs / outputs (order is the contract):  in: A, B    out: C
// Layout: each operand rank 2, last dim contiguous, row stride (BLAS leading dim) ≥
// its column count, so a matmul can read a slice of a fused buffer. C must not
// overlap A or B. When beta = 0, C is only written (its old contents, even NaN, do
// not matter), as in BLAS. Any M, N, K ≥ 0 (K = 0 gives C = beta·C).
// dtypes: A, B, C one dtype = desc.dtype. CPU f32/f64, accumulated in f64 in a fixed
// k order, so results do not depend on the thread count. CUDA bf16/f16 (fp32
// accumulate, cuBLASLt) and f32.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

struct MatmulShape {
  int64_t M = 0, N = 0, K = 0;
};

// Validates arity, ranks, shapes, dtypes, layouts and aliasing (shared by every backend).
absl::Status CheckMatmulArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                             absl::Span<const TensorView> out, MatmulShape* shape);

}  // namespace flashtick
