// kKvCacheWrite: one decode step's new key and value rows into the K/V caches, at a row
// index that is read from device memory when the op runs:
//   r = row[0];   Kcache[b, r, h, :] = k[b, 0, h, :];   Vcache[b, r, h, :] = v[b, 0, h, :]
// Why the row comes from memory and not from the op's attributes: a decode step that
// names its position only through device memory (this op, rope's position input and
// attention decode's kv_length) launches the same kernels with the same arguments at
// every step, so the step can be captured once and replayed (Backend::BeginCapture, a
// CUDA graph on the GPU; docs/serving.md, "Decode graphs").
// Inputs / outputs:  in: k, v [B, 1, Hkv, D], row: int32 [≥ 1] (row[0] is used)
//                    out: Kcache, Vcache [B, Tk, Hkv, D]
// dtypes: k, v, Kcache and Vcache desc.dtype; row int32, on the backend's device. D is
// contiguous; the B and H strides are free (k and v are slices of the fused QKV row).
// A row outside [0, Tk): the CPU backend refuses it (InvalidArgument); the CUDA kernel,
// which cannot report it, writes nothing, so a bad index never writes out of bounds.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

struct KvCacheWriteShape {
  int64_t B = 0, Tk = 0, Hkv = 0, D = 0;
};

absl::Status CheckKvCacheWriteArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                   absl::Span<const TensorView> out, KvCacheWriteShape* shape);

// Checks an optional device-side position tensor (rope's position, kv_cache_write's
// row, decode's kv_length): int32, at least `min_elems` elements, contiguous, with data
// when min_elems > 0. `op` and `name` name it in the message.
absl::Status CheckDevicePositions(const TensorView& t, int64_t min_elems, const char* op,
                                  const char* name);

}  // namespace flashtick
