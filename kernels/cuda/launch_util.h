// Small helpers for flash_cuda's host launchers (kernels/cuda/*_ops.cc): RowArg from a
// validated view, and stream-ordered scratch from the CudaContext. Host-only.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick::cuda {

inline RowArg Arg(const TensorView& t, const RowLayout& rows) {
  return RowArg{t.data, rows.row_stride};
}

// `floats` fp32 values of scratch, freed on the stream when the pointer is dropped.
inline absl::StatusOr<std::shared_ptr<void>> ScratchFloats(CudaContext& ctx, int64_t floats) {
  if (!ctx.scratch)
    return absl::FailedPreconditionError("flash_cuda: this CudaContext has no scratch allocator");
  return ctx.scratch(static_cast<size_t>(floats) * sizeof(float));
}

}  // namespace flashtick::cuda
