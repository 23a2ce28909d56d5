// Ops of Hutchinson's Hessian-diagonal estimate (Hutchinson 1990; Sophia-H, Liu et al.
// 2023 §2.3): ĥ = (1/S)·Σ_s u_s ⊙ (∇²L·u_s) with Rademacher probes u_s. Both ops run on
// the device that holds the parameters, so a Hessian refresh moves no parameter-sized
// buffer through the host (trainer/hutchinson.cc).
//
// kRademacher   U[i] = +1 or −1, each with probability ½, independent across i
//   out: U [n] contiguous, dtype desc.dtype (fp32; fp64 on the CPU)
//   attrs: desc.probe.seed. U[i] = +1 iff bit (i mod 128) of Philox4x32-10(counter =
//   (⌊i/128⌋ low 32 bits, high 32 bits, 0, 0), key = (seed low 32, seed high 32)) is set
//   (kernels/common/philox.h): a pure function of (seed, i), so every backend draws the
//   same vector, bit for bit, and any slice of it without drawing the rest.
// kProbeProduct  Y = α·(β·A + U ⊙ HV)
//   in: U, HV, A [n]      out: Y [n]      all contiguous, dtype desc.dtype
//   attrs: desc.probe.alpha (α), desc.probe.beta (β). β = 0 never reads A (A may then
//   have data == nullptr). Y may be HV or A itself (in place); it must not overlap U.
//   Arithmetic: in the dtype T, y = T(α)·(T(β)·a + u·hv), each operation rounded (no
//   fused multiply-add), so backends agree to the last bit.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

// Arity, dtype, contiguity and aliasing; returns the element count n in *n.
absl::Status CheckRademacherArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                 absl::Span<const TensorView> out, int64_t* n);
absl::Status CheckProbeProductArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                   absl::Span<const TensorView> out, int64_t* n);

}  // namespace flashtick
