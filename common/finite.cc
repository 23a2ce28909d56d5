// AllFinite (common/finite.h).
#include "common/finite.h"

#include <cstdint>
#include <cstring>

namespace flashtick {

bool AllFinite(const float* data, size_t n) {
  constexpr uint32_t kExponent = 0x7f800000u;  // binary32: 8 exponent bits, all ones = NaN/Inf
  // Blocks keep the reduction vectorised and let a bad value end the scan early enough.
  constexpr size_t kBlock = 4096;
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t end = n - b < kBlock ? n : b + kBlock;
    uint32_t any = 0;
    for (size_t i = b; i < end; ++i) {
      uint32_t bits;
      std::memcpy(&bits, data + i, sizeof(bits));
      any |= static_cast<uint32_t>((bits & kExponent) == kExponent);
    }
    if (any != 0) return false;
  }
  return true;
}

}  // namespace flashtick
