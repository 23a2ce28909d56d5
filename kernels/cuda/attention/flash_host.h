// Host-side checks shared by the Flash attention launchers: which variants exist
// (bf16/fp16, D ∈ {64, 128}; others are Unimplemented so callers and parity tests see
// SKIP, not a failure) and the layout the kernels assume (device pointers, 16-byte
// aligned rows for cp.async, strides in multiples of 8 elements). Host-only.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cuda/attention/flash_params.h"
#include "kernels/ops/attention.h"

namespace flashtick::cuda::flash {

inline constexpr double kLog2eHost = 1.4426950408889634;  // scale_log2 = scale · log2 e
inline constexpr int kRowAlignElems = 8;                   // 16 bytes of 16-bit elements

inline absl::Status CheckFlashVariant(const char* op, const AttentionShape& s, DType dtype) {
  if (dtype != DType::kBF16 && dtype != DType::kF16)
    return absl::UnimplementedError(absl::StrCat("flash_cuda: ", op, " runs in bf16 or fp16, not ",
                                                 DTypeName(dtype)));
  if (s.D != 64 && s.D != 128)
    return absl::UnimplementedError(absl::StrCat("flash_cuda: ", op, " is built for head dim 64 and 128, not ",
                                                 s.D, "; use the CPU backend for other head dims"));
  // Grids put the row/key blocks of T in y (≤ 65535 blocks of ≥ 128 rows) and B·H in x.
  if (s.T > (int64_t{1} << 22) || s.B > 65535 || s.H > 65535)
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: ", op, " supports T ≤ 4,194,304 and B, H ≤ 65535; got B=",
                                                   s.B, " T=", s.T, " H=", s.H));
  return absl::OkStatus();
}

// A [B, T, heads, D] view the kernels can read with 16-byte cp.async.
inline absl::Status CheckFlashLayout(const char* name, const TensorView& t) {
  if (t.device != DeviceKind::kCuda)
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: ", name, " is not on the GPU"));
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: ", name, " must be 16-byte aligned"));
  for (int i = 0; i < 3; ++i)
    if (t.stride(i) % kRowAlignElems != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "flash_cuda: the B, T and head strides of ", name, " must be multiples of 8 elements; got ",
          t.stride(0), ", ", t.stride(1), ", ", t.stride(2)));
  return absl::OkStatus();
}

inline BthdArg ToArg(const TensorView& t) {
  return BthdArg{t.data, t.stride(0), t.stride(1), t.stride(2)};
}

// scale and scale·log2 e; the kernels' −inf guards assume scale > 0.
inline absl::Status FlashScale(const AttentionAttrs& attrs, int64_t D, float* scale, float* scale_log2) {
  const double s = AttentionScale(attrs, D);
  if (!(s > 0.0))
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: the softmax scale must be positive; got ", s));
  *scale = static_cast<float>(s);
  *scale_log2 = static_cast<float>(s * kLog2eHost);
  return absl::OkStatus();
}

}  // namespace flashtick::cuda::flash
