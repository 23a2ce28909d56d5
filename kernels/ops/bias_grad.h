// kBiasGrad: the VJP of AddBias (Y[m, n] += b[n]) with respect to b.
//   db[n] = Σ_m dY[m, n]
// Inputs / outputs (order is the contract):  in: dY    out: db
//   dY [..., N]: any view that collapses to M rows of N (kernels/ops/row_layout.h)
//   db [N] contiguous; overwritten, never accumulated (gradient accumulation across
//   micro-batches adds whole gradient buffers with kAdd). M = 0 gives db = 0.
// dtypes: dY desc.dtype; db ParamDType(desc.dtype) (kernels/ops/param_dtype.h).
// Determinism: the sum runs over fixed blocks of kBiasGradRowBlock rows, and the block
// partials are added in block order, so the result does not depend on the thread count
// (needed for bit-exact resume on the CPU). CUDA: fp32 accumulation.
// Second order: BiasGrad is linear in dY, so the VJP of it with cotangent g_db is
// ∂dY[m, n] = g_db[n], an AddBias onto zeros (no op of its own).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick {

inline constexpr int64_t kBiasGradRowBlock = 256;

// Validates arity, layouts and dtypes; returns dY's rows.
absl::Status CheckBiasGradArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                               absl::Span<const TensorView> out, RowLayout* dy_rows);

}  // namespace flashtick
