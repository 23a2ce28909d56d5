// Test support for attention backward-over-backward: a random problem
// (Q, K, V, dO and cotangents gQ, gK, gV, all non-zero, plus O, L, Dvec from the
// naive reference), a runner for the CPU backend op in f32/f64 with contiguous or
// strided ([B, H, T, D] storage) views, and error measures. Arrays are contiguous
// fp64 in the layouts of kernels/cpu/attention_bwd_bwd_naive.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/cpu/attention_bwd_bwd_naive.h"

namespace flashtick::bob_test {

struct BobCase {
  int64_t B = 1, T = 1, H = 1, Hkv = 1, D = 16;
  bool causal = true;
  std::string Name() const;  // "B=1,T=37,H=4,Hkv=2,D=16,causal=1"
  AttentionShape shape() const { return AttentionShape{B, T, H, Hkv, D}; }
  int64_t QSize() const { return B * T * H * D; }
  int64_t KvSize() const { return B * T * Hkv * D; }
  int64_t StatSize() const { return B * H * T; }
};

struct BobProblem {
  BobCase c;
  double scale = 0.0;                             // resolved: 1/sqrt(D)
  std::vector<double> q, k, v, dout, gq, gk, gv;  // inputs
  std::vector<double> o, lse, dvec;               // from BobNaiveForwardStats

  static BobProblem Random(const BobCase& c, uint64_t seed);
  cpu::BobNaiveConfig config() const { return {c.shape(), c.causal, scale}; }
  void RecomputeStats();  // o, lse, dvec from the current q, k, v, dout
};

struct BobOutputs {
  std::vector<double> ddq, ddk, ddv, dddo;
};

BobOutputs RunNaive(const BobProblem& p);

// Runs Op::kAttentionBwdBwd on `backend` (a CPU backend) in `dtype` (f32/f64).
// strided: Q..∂dO are views of [B, heads, T, D] storage (torch's layout).
absl::StatusOr<BobOutputs> RunCpuOp(Backend& backend, const BobProblem& p, DType dtype,
                                    bool strided);

// Slack added to the FlashAttention bound (error ≤ 2 × naive error + slack): fp32
// accumulation noise, 2^-18 relative; absolute where the exact output is 0 (T = 1 has
// ∂Q = ∂K = 0, which a 16-bit naive reference reproduces exactly).
inline constexpr double kBoundFloor = 0x1p-18;

// ‖got − want‖₂ / ‖want‖₂; when want is 0 (T = 1: ∂Q = ∂K = 0), the RMS of got,
// ‖got‖₂ / √n: an error per element, comparable with kBoundFloor whatever the size
// (the plain ‖got‖₂ grows with √n and failed a 128-element fp16 output at 4.1e-6).
double RelL2(const std::vector<double>& got, const std::vector<double>& want);
// Largest RelL2 over the four outputs, and which one.
double WorstRelL2(const BobOutputs& got, const BobOutputs& want, std::string* which);

// Every value finite.
bool AllFinite(const BobOutputs& out);

// Binary file I/O for the JAX oracle (tests/bob/jax_oracle.py reads and writes these).
absl::Status WriteOracleInput(const std::string& path, const BobProblem& p);
// Reads ∂Q, ∂K, ∂V, ∂dO, then O, L, Dvec as computed by JAX.
absl::Status ReadOracleOutput(const std::string& path, const BobCase& c, BobOutputs* out,
                              std::vector<double>* o, std::vector<double>* lse,
                              std::vector<double>* dvec);

}  // namespace flashtick::bob_test
