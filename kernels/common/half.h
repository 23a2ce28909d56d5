// Host conversions between float/double and the 16-bit formats bf16 and IEEE fp16,
// each rounding to nearest, ties to even (the rounding of torch's .to(), numpy and
// the CUDA intrinsics __float2bfloat16_rn / __float2half_rn). Used by the CPU Cast op
// and by safetensors loading; stored values are raw uint16_t bit patterns.
//   bf16: 1 sign, 8 exponent, 7 mantissa bits (the top half of an fp32).
//   fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; max 65504, subnormals 2^-24.
// double -> 16-bit goes through fp32 with round-to-odd, which is exact for any target
// with at most 24 − 2 mantissa bits (Boldo & Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", 2008), so it
// never double-rounds.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace flashtick {

inline float Bf16BitsToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

inline uint16_t FloatToBf16Bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  // Adding 0x7fff plus the lowest kept bit rounds half-way cases to the even result;
  // a carry out of the mantissa bumps the exponent (and reaches inf past bf16's max).
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf/NaN
  if (exp == 0) {
    // Zero or subnormal: value = mant · 2^-24, exact in fp32.
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));  // rebias 15 -> 127
}

inline uint16_t FloatToHalfBits(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t x = bits & 0x7fffffffu;
  constexpr uint32_t kInf32 = 0x7f800000u;
  constexpr uint32_t kRoundsToInf = 0x477ff000u;  // 65520 = 65504 + half an ulp: ties go to inf
  constexpr uint32_t kMinNormal16 = 0x38800000u;  // 2^-14
  if (x >= kInf32) return sign | (x > kInf32 ? 0x7e00u : 0x7c00u);
  if (x >= kRoundsToInf) return sign | 0x7c00u;
  uint32_t exp = x >> 23;
  uint32_t mant = x & 0x7fffffu;
  uint32_t h, rem, half;
  if (x < kMinNormal16) {
    // Subnormal result: round (1.mant · 2^(exp-127)) / 2^-24 = m >> (126 − exp).
    if (exp < 102) return sign;  // below 2^-25: rounds to zero (2^-25 itself ties to even 0)
    const uint32_t m = mant | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    h = m >> shift;
    rem = m & ((1u << shift) - 1);
    half = 1u << (shift - 1);
  } else {
    h = ((exp - 112) << 10) | (mant >> 13);
    rem = mant & 0x1fffu;
    half = 0x1000u;
  }
  if (rem > half || (rem == half && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<uint16_t>(sign | h);
}

// fp32 nearest to d, rounded to odd: exact values stay; inexact ones take the
// neighbour toward zero with the last mantissa bit forced to 1.
inline float DoubleToFloatRoundOdd(double d) {
  if (std::isnan(d)) return static_cast<float>(d);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

inline uint16_t DoubleToBf16Bits(double d) { return FloatToBf16Bits(DoubleToFloatRoundOdd(d)); }
inline uint16_t DoubleToHalfBits(double d) { return FloatToHalfBits(DoubleToFloatRoundOdd(d)); }

}  // namespace flashtick
