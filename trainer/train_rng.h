// TrainRng: the training engine's random numbers (initialisation, Hutchinson's
// Rademacher probes), SplitMix64 (Steele, Lea & Flood 2014). Its whole state is one
// uint64, so checkpoints store it exactly and a resumed run draws the same numbers;
// the output is the same on every platform (no std:: distributions, whose results
// differ between standard libraries).
#pragma once

#include <cmath>
#include <cstdint>

namespace flashtick {

class TrainRng {
 public:
  explicit TrainRng(uint64_t state = 0) : state_(state) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1): 53 random bits, never 0 (safe for log).
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal by Box-Muller (one draw per call, no cached second value, so the
  // state stays a single integer).
  double Normal() {
    const double u1 = Uniform(), u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // ±1 with probability ½ each.
  double Rademacher() { return (Next() >> 63) ? 1.0 : -1.0; }

  uint64_t state() const { return state_; }
  void set_state(uint64_t s) { state_ = s; }

 private:
  uint64_t state_;
};

}  // namespace flashtick
