// Small helpers shared by the CPU reference ops: dispatch from a runtime DType to a
// C++ element type (float or double), and the row grain for ParallelFor.
#pragma once

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick::cpu {

// Calls fn(T{}) with T = float or double for dtype, else returns InvalidArgument.
template <typename Fn>
absl::Status DispatchFloat(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kF32: return fn(float{});
    case DType::kF64: return fn(double{});
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": cpu_reference computes in fp32 or fp64, got ", DTypeName(dtype)));
  }
}

// Rows per ParallelFor chunk so each chunk has about `target` elements of work:
// small ops stay on one thread, large ones split evenly.
inline int64_t RowGrain(int64_t cols, int64_t target = 1 << 14) {
  return std::max<int64_t>(1, target / std::max<int64_t>(1, cols));
}

}  // namespace flashtick::cpu
