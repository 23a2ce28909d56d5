// One measurement of the bob benchmark: builds seeded inputs on the GPU, runs the CUDA
// attention backward-over-backward launcher on a stream of our own (cudaEvent timing,
// L2 flushed before every rep, median), measures the op's scratch (its extra memory),
// and optionally our forward+backward at the same shape for the ratio of the two.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace flashtick::bench {

// FLOP convention (docs/derivations/attention_bwd_bwd.md §4): a unit is one T×D by D×T
// product per head, 2·B·H·T²·D FLOPs, halved when causal.
inline constexpr int kBobMatmulUnits = 17;      // the algorithm's count (reported as tflops)
inline constexpr int kBobExecutedUnits = 19;    // what pass 1 + pass 2 run (with (13′))
inline constexpr double kCheckMaxRelL2 = 2e-2;  // bf16 sanity gate before timing

struct BenchShape {
  int64_t B = 1, T = 0, H = 12, Hkv = 12, D = 64;
  bool causal = true;
};

struct BenchResult {
  double ms = 0.0;  // median
  int reps = 0;
  int64_t peak_extra_bytes = 0;  // scratch the op allocated (c, e)
  bool finite = true;            // every output value finite
  double fwd_bwd_ms = 0.0;       // our forward + backward, 0 when those kernels are absent
};

double BobFlops(const BenchShape& s, int units);

// Compares the kernel with the float64 plain reference on B=1, T=300, H=4, Hkv=2, D=64,
// causal; returns the worst relative L2 error over ∂Q, ∂K, ∂V, ∂dO.
absl::StatusOr<double> CheckAgainstCpu();

// ResourceExhausted when the inputs or the op do not fit on the GPU.
absl::StatusOr<BenchResult> RunOne(const BenchShape& s, const std::string& dump_dir);

}  // namespace flashtick::bench
