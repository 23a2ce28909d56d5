// Rotary position embedding (RoFormer, Su et al. 2021, eq. 34), interleaved pairs as
// in the original paper and GPT-J. For a row of head dim D at position p = offset + t,
// with R = rotary_dims (R = D unless set), each pair (2i, 2i+1), i < R/2, is rotated by
// the angle a = p·θ^(−2i/R):
//   y_2i   = x_2i·cos a − x_2i+1·sin a
//   y_2i+1 = x_2i·sin a + x_2i+1·cos a
// and dims R..D−1 pass through unchanged (partial rotary, as GPT-J's rotary_dim and
// GPT-NeoX's rotary_pct: the unrotated dims score q·k by content alone, at any
// distance; docs/model.md says why a tick model wants that). R = 0 is no position
// signal at all (NoPE).
// inverse = true rotates by −a: the transpose of the rotation, which is its VJP (and,
// the rotation being orthogonal, its inverse). Applied to q and k, it makes q·k depend
// on positions only through their difference.
// Inputs / outputs:  in: X [B, T, H, D] [, position: int32 [≥ 1]]    out: Y [B, T, H, D]
// With the optional position input the row at step t is at p = offset + position[0] + t,
// position[0] read from the backend's memory when the op runs (≥ 0; the CPU refuses a
// negative one, CUDA clamps it to 0), so a decode step can name its position without
// changing the op's arguments from one step to the next (kernels/ops/kv_cache.h says
// why).
// Strides of B, T and H are free and may differ between X and Y (q and k are slices
// of the fused QKV buffer); D is contiguous and even. Y may be X itself (in place),
// otherwise no overlap. attrs: desc.rope (theta > 0, position_offset ≥ 0, inverse,
// rotary_dims −1 or even in [0, D]).
// dtypes: desc.dtype. The angle p·θ^(−2i/D) is formed in f64 on the CPU (an fp32
// angle loses ~1e-3 rad at p ≈ 23,400), sin and cos in f64.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

struct RopeShape {
  int64_t B = 0, T = 0, H = 0, D = 0;
  int64_t R = 0;  // rotated dims, resolved (−1 → D)
};

absl::Status CheckRopeArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                           absl::Span<const TensorView> out, RopeShape* shape);

}  // namespace flashtick
