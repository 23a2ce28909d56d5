// The small grouped-query model and random rows the decode-step tests share
// (decode_step_transfers_test.cc, decode_capture_test.cc): 2 layers of width 32, 4 query
// heads over 2 key/value heads, so a step runs every op of the decode path in
// microseconds on the CPU.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "model/config.h"

namespace flashtick::testing {

inline ModelConfig SmallDecodeConfig() {
  ModelConfig c;
  c.width = 32;
  c.heads = 4;
  c.kv_heads = 2;
  c.layers = 2;
  c.max_context = 1024;
  return c;
}

// T rows of F standard-normal features, the same for the same seed.
inline std::vector<float> RandomRows(int64_t T, int64_t F, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(T * F);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace flashtick::testing
