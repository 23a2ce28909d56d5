// LayerNorm forward (Ba, Kiros & Hinton 2016), per row of C values:
//   μ = mean(x);  σ² = mean((x − μ)²) (biased);  r = 1/√(σ² + eps);
//   x̂ = (x − μ)·r;  y = γ∘x̂ + β
// Inputs / outputs (order is the contract):
//   in:  X [..., C], γ [C], β [C]         out: Y [..., C], mean [M], rstd [M]
// X and Y: views that collapse to the same M rows of C (kernels/ops/row_layout.h; row
// strides may differ); Y may be X itself (in place), otherwise no overlap. γ, β,
// mean (μ per row) and rstd (r per row): contiguous. The backward ops
// (layernorm_bwd.h) recompute μ and r from X, so mean and rstd are for inspection and
// for kernels that want them; they are always written.
// dtypes: X, Y desc.dtype; γ, β, mean, rstd ParamDType(desc.dtype) (fp32 beside
// bf16/f16 activations). eps: desc.layernorm.eps. CPU: two-pass mean and variance in
// f64; CUDA: fp32.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick {

// Validates the op's tensors; returns the row layouts of X and Y.
absl::Status CheckLayerNormArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                absl::Span<const TensorView> out, RowLayout* x_rows,
                                RowLayout* y_rows);

}  // namespace flashtick
