// GELU, tanh approximation (Hendrycks & Gimpel 2016; as GPT-2 and PyTorch
// approximate='tanh'), elementwise:
//   y = ½·x·(1 + tanh(k0·(x + k1·x³))),   k0 = √(2/π), k1 = 0.044715
// (kGeluK0, kGeluK1 in gelu_bwd.h, beside the derivatives.)
// Inputs / outputs:  in: X [..., C]    out: Y, the same shape
// X and Y: views that collapse to the same rows (kernels/ops/row_layout.h); Y may be
// X itself (in place), otherwise no overlap.
// dtypes: desc.dtype. CPU computes in f64; CUDA in fp32.
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick {

// Validates a unary row-wise op (X -> Y of one dtype, same shape, in place allowed):
// used by Gelu and Softmax. Returns the row layouts of X and Y.
absl::Status CheckUnaryRowArgs(const char* op, const OpDesc& desc,
                               absl::Span<const TensorView> in, absl::Span<const TensorView> out,
                               RowLayout* x_rows, RowLayout* y_rows);

}  // namespace flashtick
