// Plain reference for attention backward-over-backward, for tests: one full row of
// P, dP, G, B at a time (O(T) memory per row, no tiling, no end-of-row corrections),
// written straight from equations (0)-(14) of docs/derivations/attention_bwd_bwd.md.
// It also computes the op's other inputs (O, L, Dvec) and the first backward, so a
// test can build every input of Op::kAttentionBwdBwd and finite-difference the
// backward without any other op. Arrays are contiguous fp64: Q, O, dO, gQ, ∂Q, ∂dO
// [B, T, H, D]; K, V, gK, gV, ∂K, ∂V [B, T, Hkv, D]; L, Dvec [B, H, T].
#pragma once

#include "kernels/ops/attention.h"

namespace flashtick::cpu {

struct BobNaiveConfig {
  AttentionShape shape;
  bool causal = true;
  double scale = 0.0;  // 0: 1/sqrt(D)
};

// Forward and D: O = softmax(scale·Q Kᵀ) V, L_i = logsumexp_j S_ij, Dvec_i = dO_i·O_i.
void BobNaiveForwardStats(const BobNaiveConfig& cfg, const double* q, const double* k,
                          const double* v, const double* dout, double* o, double* lse,
                          double* dvec);

// First backward (FlashAttention-2 math): dQ, dK, dV from Q, K, V, dO.
void BobNaiveBackward(const BobNaiveConfig& cfg, const double* q, const double* k, const double* v,
                      const double* dout, double* dq, double* dk, double* dv);

// Backward-over-backward: ∂Q, ∂K, ∂V, ∂dO from Q, K, V, dO and cotangents gQ, gK, gV
// (O, L, D are recomputed here, so this is independent of the op's stored inputs).
// `round`, when given, emulates a straightforward low-precision implementation for the
// FlashAttention test bound (STYLE rule 4): it is applied to the score-sized operands
// of the output products (P, dS, ∂S, P∘(G − c), as a flash kernel stores them in 16 bits)
// and to the outputs; everything else stays fp64. `dvec_in`, when given ([B, H, T]), is
// used for D instead of dO·O recomputed here: the op's own input, e.g. as a first
// backward wrote it from a 16-bit O, so this reference answers for the same inputs.
void BobNaiveBwdBwd(const BobNaiveConfig& cfg, const double* q, const double* k, const double* v,
                    const double* dout, const double* gq, const double* gk, const double* gv,
                    double* ddq, double* ddk, double* ddv, double* dddo,
                    double (*round)(double) = nullptr, const double* dvec_in = nullptr);

}  // namespace flashtick::cpu
