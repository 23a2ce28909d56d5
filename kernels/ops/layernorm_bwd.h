// LayerNorm backward and backward-over-backward. The forward (kernels/ops/layernorm.h),
// per row of C: μ = mean(x), σ² = mean((x − μ)²), r = 1/√(σ² + eps), x̂ = (x − μ)·r,
// y = γ∘x̂ + β. Both ops recompute μ and r from X (one pass over the row), so they need
// nothing saved from the forward but X.
//
// kLayerNormBwd, the VJP with cotangent dY (llm.c layernorm_backward):
//   g = dY∘γ;  dX = r·(g − mean(g) − x̂·mean(g∘x̂));  dγ = Σ_rows dY∘x̂;  dβ = Σ_rows dY
//   in: X, γ, dY      out: dX, dγ, dβ
// The map a ↦ r·(a − mean(a) − x̂·mean(a∘x̂)) is J = ∂x̂/∂x = r·(I − 11ᵀ/C − x̂x̂ᵀ/C),
// which is symmetric; dX = J g.
//
// kLayerNormBwdBwd, the VJP of (X, γ, dY) ↦ (dX, dγ, dβ) with cotangents (gX, gγ, gβ);
// per row, with g = dY∘γ, ã = J gX, m_g = mean(g), m_a = mean(gX),
// gx = mean(g∘x̂), ax = mean(gX∘x̂), ga = mean(g∘gX)
// (derivation: docs/derivations/layernorm_bwd_bwd.md):
//   ∂dY = γ∘ã + gγ∘x̂ + gβ
//   ∂γ  = Σ_rows dY∘ã
//   ∂X  = r²·x̂·(gx·ax − ga + m_g·m_a) − r·(ax·dX + gx·ã) + J(gγ∘dY)
//   in: X, γ, dY, gX, gγ, gβ      out: ∂X, ∂γ, ∂dY
//
// Layouts: X, dY, dX, gX, ∂X, ∂dY [..., C], views that collapse to the same M rows of C
// (kernels/ops/row_layout.h; row strides may differ); γ, β-shaped tensors [C]
// contiguous. Outputs must not overlap any input or each other. Param-shaped outputs
// (dγ, dβ, ∂γ) are overwritten, never accumulated.
// dtypes: row tensors desc.dtype; [C] tensors ParamDType(desc.dtype)
// (kernels/ops/param_dtype.h). Row statistics and sums in fp32 (CUDA) or f64 (CPU).
// Determinism: column sums over rows run over fixed blocks of kLayerNormRowBlock rows
// added in block order (independent of the thread count).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick {

inline constexpr int64_t kLayerNormRowBlock = 64;

// The row layouts of the row tensors, in contract order (inputs then outputs).
struct LayerNormBwdLayout {
  int64_t M = 0, C = 0;
  RowLayout x, dy, dx;     // kLayerNormBwd: X, dY, dX
  RowLayout gx, dx2, ddy;  // kLayerNormBwdBwd adds gX, ∂X, ∂dY (dx unused)
};

absl::Status CheckLayerNormBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                   absl::Span<const TensorView> out, LayerNormBwdLayout* layout);
absl::Status CheckLayerNormBwdBwdArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                      absl::Span<const TensorView> out, LayerNormBwdLayout* layout);

}  // namespace flashtick
