// Matmul: C = alpha·op(A)·op(B) + beta·C (+ b), the GEMM of BLAS with an optional bias
// epilogue. Every linear layer of the model is one Matmul: y = x·Wᵀ + b is
// (A = x [M, C_in], B = W [C_out, C_in], trans_b, bias).
//   op(A) = A or Aᵀ (attrs.trans_a): op(A) is [M, K], so A is [M, K] or [K, M]
//   op(B) = B or Bᵀ (attrs.trans_b): op(B) is [K, N], so B is [K, N] or [N, K]
//   C [M, N];  C_mn = alpha·Σ_k op(A)_mk·op(B)_kn + beta·C_mn [+ b_n when attrs.bias]
// Inputs / outputs (order is the contract):  in: A, B [, b]    out: C
// The bias b [N] (present exactly when attrs.bias) is added once to every row, unscaled
// by alpha or beta: the separate Op::kAddBias after a matmul cost as much GPU time as
// the matmul itself (docs/serving.md, the per-op profile), while in cuBLASLt's epilogue
// it is nearly free (see Rounding). b is contiguous and of
// ParamDType(desc.dtype) (kernels/ops/param_dtype.h: fp32 beside bf16/f16 activations, as
// kAddBias's b and the model's bias parameters), and must not overlap C.
// Rounding: CUDA fp32 matmuls add b to the accumulator in cuBLASLt's epilogue. cuBLASLt's
// heuristic rejects our fp32 b beside a 16-bit C (INVALID_VALUE, cuBLAS 13 on an H100), so
// bf16/fp16 ones add a copy of b rounded to C's dtype in the epilogue and round the sum
// once: two roundings, as the GEMM rounded and then b added in a row pass (the fallback,
// kernels/cuda/matmul.cc), but not bit for bit the same ones. The CPU reference rounds
// alpha·op(A)·op(B) + beta·C to C's dtype first and then adds b, bit for bit a matmul
// followed by kAddBias: in f32/f64 the extra rounding is ≤ 1 ulp, but a CPU training
// run is chaotic enough to amplify it (rounding once flipped the gate of
// tests/sweep/sweep_planted_test's demo sweep: PBO 0.001 → 0.46), so every CPU result
// stays as it was before the fusion.
// GELU (attrs.gelu, beta = 0 only): C = GELU(alpha·op(A)·op(B) [+ b]), Op::kGelu's tanh
// form (kernels/ops/gelu.h), for the MLP's first layer at inference. On CUDA it runs in
// cuBLASLt's GELU epilogue (its GELU is the same tanh approximation), on the fp32 sum
// before the one rounding to C's dtype, so the pass over C that Op::kGelu costs is gone;
// where the heuristic offers no algorithm with it, kGelu's kernel runs after the GEMM.
// The CPU rounds as a matmul, kAddBias and then kGelu would, bit for bit (see Rounding).
// Training keeps the separate op: its backward needs the pre-activation.
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

// Validates arity (3 inputs when attrs.bias), ranks, shapes, dtypes, layouts and
// aliasing (shared by every backend).
absl::Status CheckMatmulArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                             absl::Span<const TensorView> out, MatmulShape* shape);

}  // namespace flashtick
