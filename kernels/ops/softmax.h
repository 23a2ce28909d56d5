// Row softmax over the last dim (the model's 3-class head: probabilities per step):
//   y_n = exp(x_n − max_k x_k) / Σ_k exp(x_k − max_k x_k)
// Subtracting the row max keeps exp from overflowing; it does not change y.
// A row of all −inf has no defined softmax and gives NaN, as in PyTorch.
// Inputs / outputs:  in: X [..., N]    out: Y, the same shape
// X and Y: views that collapse to the same rows (kernels/ops/row_layout.h); Y may be
// X itself (in place), otherwise no overlap.
// dtypes: desc.dtype. CPU computes in f64; CUDA in fp32.
// Validation: CheckUnaryRowArgs (kernels/ops/gelu.h).
#pragma once

#include "kernels/ops/gelu.h"
