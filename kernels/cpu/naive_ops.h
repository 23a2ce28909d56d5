// Plain loop versions of the CPU ops whose fast versions are blocked or threaded:
// the readable specification that tests and parity cases compare the fast path to.
// Same contracts and validation as the ops in cpu_ops.h; single-threaded.
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick::cpu {

// C = alpha·op(A)·op(B) + beta·C (+ b) as a triple loop with an f64 accumulator
// (kernels/ops/matmul.h).
absl::Status MatmulNaive(const OpDesc& desc, absl::Span<const TensorView> in,
                         absl::Span<const TensorView> out);

}  // namespace flashtick::cpu
