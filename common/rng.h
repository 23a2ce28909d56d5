// Rng: a small, portable, seeded random source for the research generators and
// SimpleSyntheticDay (ticks/features.h).
// xoshiro256** (Blackman & Vigna 2018) seeded through SplitMix64, with our own
// Box–Muller normals, so a seed gives the same day on every compiler and standard
// library (std::normal_distribution is implementation-defined, so it is not used).
// Not for cryptography.
#pragma once

#include <cstdint>

namespace flashtick {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t NextU64();
  // Uniform on the open interval (0, 1): never 0, so log(Uniform()) is finite.
  double Uniform();
  // Standard normal N(0, 1) by Box–Muller (the second value is cached).
  double Normal();
  // Exponential with rate 1.
  double Exponential();
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, bias < 2^-64·n).
  uint64_t Below(uint64_t n);
  // +1 or −1 with probability ½ each.
  int Sign();

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace flashtick
