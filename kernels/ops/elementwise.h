// Elementwise ops: AddBias, Add, Cast. All work on views that collapse to rows
// (kernels/ops/row_layout.h): the last dim contiguous, leading dims whole rows apart,
// so [B, T, C] buffers and strided slices of them are both accepted.
//
// kAddBias  Y[m, n] = X[m, n] + b[n]            (the bias of a linear layer)
//   in: X [..., N], b [N] contiguous     out: Y, the same shape as X
//   dtypes: X, Y desc.dtype; b ParamDType(desc.dtype) (kernels/ops/param_dtype.h:
//   fp32 bias on bf16/f16 activations). Its VJP for b is kBiasGrad (bias_grad.h).
// kAdd      Z = X + Y                            (residual connections, gradient sums)
//   in: X, Y (same shape)                out: Z, the same shape
//   dtypes: all desc.dtype.
// kCast     Y = X rounded to Y's dtype           (fp32 master weights -> bf16, ...)
//   in: X                                out: Y, the same shape
//   dtypes: X desc.dtype; X and Y each any of f32, f64, bf16, f16. Rounding is to
//   nearest, ties to even (double -> 16-bit rounds once, never twice; see
//   kernels/common/half.h); overflow gives ±inf; NaN stays NaN; widening is exact.
//
// In place: an output may be the very same view as an input of its own dtype (Y = X
// for AddBias and Cast to the same dtype; Z = X or Z = Y for Add). Otherwise outputs
// must not overlap inputs. Row strides of the row tensors may differ.
// Computation: CPU in f64 then rounded once; CUDA in fp32.
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick {

// Each returns the row layouts of the row tensors in contract order (inputs then
// outputs, parameter-shaped [N] tensors skipped): AddBias {X, Y}, Add {X, Y, Z},
// Cast {X, Y}.
absl::Status CheckAddBiasArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                              absl::Span<const TensorView> out, RowLayout rows[2]);
absl::Status CheckAddArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                          absl::Span<const TensorView> out, RowLayout rows[3]);
absl::Status CheckCastArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                           absl::Span<const TensorView> out, RowLayout rows[2]);

// An output may be `in` itself (the same view, in place) or must not overlap it.
absl::Status CheckInPlaceOrDisjoint(const TensorView& out, const TensorView& in, const char* op,
                                    const char* out_name, const char* in_name);

}  // namespace flashtick
