// Element i of a raw host buffer of a floating dtype, as a double: the one decoding of
// fp64 / fp32 / bf16 / fp16 storage that safetensors loading, the attention-weight
// probe and the benchmarks' downloads share. bf16 and fp16 widen exactly (half.h).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/common/half.h"
#include "kernels/tensor.h"

namespace flashtick {

// NaN for a dtype that is not floating point (I32): callers refuse those first.
inline double ElementValue(DType dt, const void* data, size_t i) {
  const char* p = static_cast<const char*>(data);
  switch (dt) {
    case DType::kF64: {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      return v;
    }
    case DType::kF32: {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case DType::kBF16:
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      return dt == DType::kBF16 ? Bf16BitsToFloat(h) : HalfBitsToFloat(h);
    }
    default:
      return std::nan("");
  }
}

}  // namespace flashtick
