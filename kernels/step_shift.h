// Moving each sequence's rows one step along time, for attention that excludes the step
// itself (docs/model.md, "Attention that excludes the step itself"): a layer's keys and
// values move one step later before an ordinary causal attention, so row i sees steps
// 0..i−1 and a zero row (a "sink" key with score 0 and value 0) instead of itself.
// src and dst are [B·T, cols] views of B sequences of T rows each (the last dim
// contiguous, any row stride), of one shape and dtype, not overlapping.
//   ShiftStepsLater:    dst[b, t] = src[b, t − 1] for t ≥ 1;  dst[b, 0] = 0
//   ShiftStepsEarlier:  dst[b, t] = src[b, t + 1] for t < T − 1;  dst[b, T − 1] = 0
// The second is the first's adjoint (transpose), which the backward and the
// backward-over-backward apply to the shifted operands' cotangents. Both run as one
// Cast and one Zero per sequence on the backend, so every backend has them.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/backend.h"

namespace flashtick {

absl::Status ShiftStepsLater(Backend& be, const TensorView& src, const TensorView& dst, int64_t B,
                             int64_t T);
absl::Status ShiftStepsEarlier(Backend& be, const TensorView& src, const TensorView& dst,
                               int64_t B, int64_t T);

// The [rows, cols] view of columns [col, col + cols) of a [rows, width] row-major buffer.
TensorView ColumnBlock(const TensorView& buf, int64_t col, int64_t cols);

}  // namespace flashtick
