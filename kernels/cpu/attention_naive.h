// The plain attention reference used by tests: one full softmax per query row
// (P_i· computed whole, O(T) memory per row, never T×T; the backward keeps an
// O(B·H·T·D) fp64 share of dK, dV per query head), optionally emulating a
// straightforward low-precision implementation. It is the "naive" side of the
// FlashAttention test bound: error(kernel vs fp64) ≤ 2 × error(naive in the same
// low precision vs fp64). Emulating bf16/f16 rounds what such an implementation
// stores in that dtype: the inputs, P (before P·V and Pᵀ·dO), dS (before dS·K and
// dSᵀ·Q) and the outputs; its matmuls accumulate in fp32 and its softmax runs in fp32.
// Arrays are contiguous fp64: Q, O, dO, dQ [B, T, H, D]; K, V, dK, dV [B, T, Hkv, D];
// L, Dvec [B, H, T]. Math: kernels/ops/attention.h.
#pragma once

#include "kernels/cpu/thread_pool.h"
#include "kernels/ops/attention.h"

namespace flashtick::cpu {

struct NaiveAttentionOptions {
  bool causal = true;
  double scale = 0.0;            // 0: 1/sqrt(D)
  DType emulate = DType::kF64;   // kF64: exact reference; kF32, kBF16, kF16: emulation
  ThreadPool* pool = nullptr;    // null: serial
};

// Rounds x to the nearest value of `dtype` (ties to even); kF64 returns x.
double RoundTo(DType dtype, double x);

void NaiveAttentionFwd(const AttentionShape& s, const NaiveAttentionOptions& opt, const double* q,
                       const double* k, const double* v, double* o, double* lse);

// dvec may be null. O is an input (as in the op contract), used for D_i = dO_i·O_i.
void NaiveAttentionBwd(const AttentionShape& s, const NaiveAttentionOptions& opt, const double* q,
                       const double* k, const double* v, const double* o, const double* dout,
                       double* dq, double* dk, double* dv, double* dvec);

}  // namespace flashtick::cpu
