// Standard-normal fp32 ticks from a seeded std::mt19937, for the tests and benchmarks
// that feed a model made-up inputs (tests/server/batched_predict_test.cc,
// bench/serve_latency/serve_latency_inproc.cc). The same seed gives the same values
// everywhere, so a benchmark's inputs can be reproduced in a test.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace flashtick {

inline std::vector<float> RandomTicks(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = normal(rng);
  return v;
}

}  // namespace flashtick
