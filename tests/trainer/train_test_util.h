// Helpers for the training-engine tests (tests/trainer, tests/parallel): a tiny model
// config (GQA, two layers), the options of a short training run, seeded synthetic
// batches with ignored labels, and flat-vector algebra.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "model/config.h"
#include "trainer/trainer.h"
#include "trainer/train_rng.h"

namespace flashtick::train_test {

inline ModelConfig TinyConfig() {
  ModelConfig c;
  c.name = "train-test-tiny";
  c.features = 3;
  c.width = 8;
  c.layers = 2;
  c.heads = 2;
  c.kv_heads = 1;  // grouped-query attention
  c.mlp_ratio = 2;
  c.classes = 3;
  c.max_context = 64;
  return c;
}

// A 20-step run with a 2-step warmup to a peak of 1e-2 and a Sophia-H Hessian
// refresh every other step, so that a few steps exercise warmup, cosine decay and
// several refreshes. Callers set the dtype (and anything else) they test.
inline TrainerOptions ShortRunOptions(OptimizerKind kind, uint64_t seed) {
  TrainerOptions o;
  o.optimizer = kind;
  o.hyper = OptimizerHyper::Defaults(kind);
  o.lr.peak = 1e-2;
  o.lr.warmup_steps = 2;
  o.lr.total_steps = 20;
  o.hessian_interval = 2;
  o.seed = seed;
  return o;
}

struct Batch {
  int64_t B = 0, T = 0;
  std::vector<float> ticks;     // [B, T, F]
  std::vector<int32_t> labels;  // [B, T], −1 = ignore
};

// Random ticks; labels from the sign of a running sum of feature 0 (learnable from
// the causal context), every 5th label ignored.
inline Batch MakeBatch(int64_t B, int64_t T, int F, uint64_t seed) {
  TrainRng rng(seed);
  Batch b{B, T, std::vector<float>(B * T * F), std::vector<int32_t>(B * T)};
  for (int64_t i = 0; i < B; ++i) {
    double run = 0.0;
    for (int64_t t = 0; t < T; ++t) {
      for (int f = 0; f < F; ++f) b.ticks[(i * T + t) * F + f] = static_cast<float>(rng.Normal());
      run = 0.7 * run + b.ticks[(i * T + t) * F];
      const int32_t y = run > 0.5 ? 2 : (run < -0.5 ? 0 : 1);
      b.labels[i * T + t] = (t % 5 == 4) ? -1 : y;
    }
  }
  return b;
}

inline double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline double Norm(const std::vector<double>& a) { return std::sqrt(Dot(a, a)); }

inline double RelL2(const std::vector<double>& got, const std::vector<double>& want) {
  double e = 0.0;
  for (size_t i = 0; i < want.size(); ++i) e += (got[i] - want[i]) * (got[i] - want[i]);
  const double n = Norm(want);
  return n > 0 ? std::sqrt(e) / n : std::sqrt(e);
}

}  // namespace flashtick::train_test
