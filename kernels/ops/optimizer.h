// Optimizer steps on fp32 (CPU also fp64) master weights, elementwise over one
// parameter tensor. Every tensor of one call has the same shape and is contiguous;
// the caller runs one call per parameter tensor (so weight decay can differ between
// matrices and LayerNorm/bias vectors). All tensors have dtype desc.dtype = the
// parameter dtype (fp32, or fp64 on the CPU). Hyperparameters: desc.optimizer
// (OptimizerAttrs in kernels/ops/op_desc.h). First, on every path:
//   g = grad_scale·grad      (grad_scale folds global-norm clipping and the 1/n of
//                             gradient accumulation into the step; 1 = unscaled)
//
// kAdamW (Loshchilov & Hutter 2019; the update of torch.optim.AdamW):
//   m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
//   m̂ = m/(1 − β1^step);     v̂ = v/(1 − β2^step)         (step ≥ 1, bias correction)
//   θ ← θ − lr·λ·θ;          θ ← θ − lr·m̂/(√v̂ + ε)      (λ = weight_decay, decoupled)
//   in: grad      out (read-modify-write): param, m, v
//   Typical: lr 3e-4, β1 0.9, β2 0.999 (0.95 for transformers), ε 1e-8, λ 0.1.
//
// kSophiaH (Liu et al. 2023, "Sophia: A Scalable Stochastic Second-order Optimizer for
// Language Model Pre-training", Algorithm 3 with the Hutchinson estimator of §2.3):
//   m ← β1·m + (1 − β1)·g
//   h ← β2·h + (1 − β2)·ĥ      only when ĥ is given (every k-th step; k is the caller's)
//   θ ← θ − lr·λ·θ             (decoupled weight decay)
//   θ ← θ − lr·clip(m / max(ρ·h, ε), 1),    clip(z, 1) = max(−1, min(1, z))
//   in: grad, ĥ      out (read-modify-write): param, m, h
//   ĥ = u∘(∇²L·u), u Rademacher (the Hutchinson estimate of diag ∇²L; the paper draws
//   u ~ N(0, I); both are unbiased, Rademacher has the lower variance). Pass ĥ with
//   data == nullptr on steps without a Hessian refresh. ρ is the paper's γ (v2 of the
//   paper; v1 wrote clip(m/max(h, ε), ρ), the same step up to lr·ρ). A negative or
//   tiny h makes the denominator ε, so the step saturates to lr·sign(m).
//   Attributes: beta1 ↔ β1 (paper 0.96), beta2 ↔ β2 of the Hessian EMA (paper 0.99),
//   rho ↔ γ (paper 0.01–0.05), eps ↔ ε (paper 1e-12), weight_decay ↔ λ (paper 0.2),
//   lr ↔ η (paper: about half of AdamW's). step is unused (Sophia-H has no bias
//   correction).
// Arithmetic, so that backends agree to the last bit up to fused multiply-add
// contraction: host scalars are computed in fp64 and rounded once to the parameter
// dtype T: decay = 1 − lr·λ, bc1 = 1 − β1^step, bc2 = 1 − β2^step, and 1 − β1, 1 − β2
// as T(1) − T(β). Elementwise, in T, in this order:
//   g = T(grad_scale)·grad;  m = T(β1)·m + (T(1) − T(β1))·g;  (v, h likewise)
//   AdamW:    θ = θ·decay;  θ = θ − T(lr)·((m/bc1) / (√(v/bc2) + T(ε)))
//   Sophia-H: θ = θ·decay;  θ = θ − T(lr)·clamp(m / max(T(ρ)·h, T(ε)), −1, 1)
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

// Validates arity, shapes, dtypes, contiguity, aliasing and hyperparameters
// (lr ≥ 0, β ∈ [0, 1), ε > 0, ρ > 0, step ≥ 1 for AdamW);
// returns the element count. *has_hhat: kSophiaH got a Hessian estimate this step.
absl::Status CheckOptimizerArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                absl::Span<const TensorView> out, int64_t* n, bool* has_hhat);

}  // namespace flashtick
