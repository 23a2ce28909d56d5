// Rng: xoshiro256** with SplitMix64 seeding and Box–Muller normals.
// Reference: https://prng.di.unimi.it/xoshiro256starstar.c (public domain algorithm).
#include "common/rng.h"

#include <cmath>

namespace flashtick {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr double kTwoPow53Inv = 1.0 / 9007199254740992.0;  // 2^-53

uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) s = SplitMix64(x);  // never all zero: SplitMix64 is a bijection chain
}

uint64_t Rng::NextU64() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() {
  // 53 random bits, shifted by half an ulp so the result lies strictly inside (0, 1).
  return (static_cast<double>(NextU64() >> 11) + 0.5) * kTwoPow53Inv;
}

double Rng::Normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double r = std::sqrt(-2.0 * std::log(Uniform()));
  const double theta = kTwoPi * Uniform();
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

double Rng::Exponential() { return -std::log(Uniform()); }

uint64_t Rng::Below(uint64_t n) {
  const unsigned __int128 m = static_cast<unsigned __int128>(NextU64()) * n;
  return static_cast<uint64_t>(m >> 64);
}

int Rng::Sign() { return (NextU64() >> 63) ? 1 : -1; }

}  // namespace flashtick
