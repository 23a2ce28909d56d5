// GELU (tanh approximation, as GPT-2 and PyTorch approximate='tanh') backward and
// backward-over-backward. Forward (kernels/ops/gelu.h), elementwise:
//   u = k0·(x + k1·x³),  t = tanh(u),  y = ½·x·(1 + t),   k0 = √(2/π), k1 = 0.044715
// Derivatives, with s = 1 − t², u' = k0·(1 + 3k1·x²), u'' = 6·k0·k1·x:
//   y'  = ½(1 + t) + ½·x·s·u'
//   y'' = s·u' + ½·x·s·(u'' − 2·t·u'²)
//
// kGeluBwd, the VJP with cotangent dY:           dX = dY∘y'(X)
//   in: X, dY      out: dX
// kGeluBwdBwd, the VJP of (X, dY) ↦ dX with cotangent gdX:
//   ∂X = gdX∘dY∘y''(X);   ∂dY = gdX∘y'(X)
//   in: X, dY, gdX      out: ∂X, ∂dY
//
// Layouts: every tensor [..., C], views that collapse to the same M rows of C
// (kernels/ops/row_layout.h; row strides may differ). dX may be the same view as dY
// (in place); otherwise outputs must not overlap inputs or each other.
// dtypes: all desc.dtype; CUDA computes in fp32.
#pragma once

#include <cmath>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick {

inline constexpr double kGeluK0 = 0.7978845608028654;  // √(2/π)
inline constexpr double kGeluK1 = 0.044715;

// The CPU's GELU of one value, in f64: Op::kGelu's CPU kernel and the CPU matmul's GELU
// epilogue (matmul.h) both call it, so the two round alike bit for bit.
inline double GeluTanh(double x) {
  const double u = kGeluK0 * (x + kGeluK1 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(u));
}

struct GeluBwdLayout {
  int64_t M = 0, C = 0;
  RowLayout rows[5];  // contract order: inputs then outputs
  int count = 0;
};

absl::Status CheckGeluBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                              absl::Span<const TensorView> out, GeluBwdLayout* layout);
absl::Status CheckGeluBwdBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                 absl::Span<const TensorView> out, GeluBwdLayout* layout);

}  // namespace flashtick
