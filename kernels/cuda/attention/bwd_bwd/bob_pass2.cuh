// FlashBoB pass 2: key rows resident (docs/derivations/attention_bwd_bwd.md §3).
// One CTA per (kBlockM key rows, K/V head hk, batch b); it streams the query row tiles of
// every query head of hk's GQA group, so each ∂K, ∂V row has exactly one writer (no
// atomics). Scores are computed transposed (key rows × query columns):
//   phase A  Sᵀ = K Qᵀ, dPᵀ = V dOᵀ, Gᵀ = s(K gQᵀ + gK Qᵀ) (1), Bᵀ = gV dOᵀ (2); with the
//            stored L, D, c, e of each query column: P, dS = P∘(dP − D),
//            H = (dP − D)∘G − c·dP + B (4), ∂S = P∘(H − e) (11), P∘(G − c) (10)
//            → shared (16-bit), as [key][query] tiles
//   phase B  ∂V += (P∘(G − c))ᵀ dO (10);  ∂K += dSᵀ gQ + ∂Sᵀ Q (14, times s at the end)
// Causal: query tiles before the key tile's first row are never visited.
// Legend: j key row, i query row, g = lane/4, t = lane%4 (fragment coordinates).
#pragma once

#include "kernels/cuda/attention/bwd_bwd/bob_traits.cuh"

namespace flashtick::cuda::bob {

template <typename Traits>
struct Pass2Smem {
  static constexpr int kResident = 4 * Traits::kRowTileElems;  // K, V, gK, gV
  static constexpr int kPerStage = 3 * Traits::kColTileElems;  // Q, dO, gQ
  static constexpr int kScores = 3 * Traits::kScoreTileElems;  // P∘(G − c), dS, ∂S
  static constexpr int kElems = kResident + Traits::kStages * kPerStage + kScores;
  static constexpr int kStatFloats = 4 * Traits::kBlockN;  // L, D, c, e per stage
  static constexpr size_t kBytes = size_t{kElems} * 2 + size_t{Traits::kStages} * kStatFloats * 4;
};

template <typename Element, typename Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) bob_pass2_kernel(const BobParams p) {
  using Mma = ElementTraits<Element>;
  constexpr int D = Traits::kHeadDim, kM = Traits::kBlockM, kN = Traits::kBlockN;
  constexpr int kS = Traits::kScoreCols;  // row length of the score tiles
  using Smem = Pass2Smem<Traits>;
  FLASH_DYNAMIC_SMEM(smem_raw);
  Element* sK = reinterpret_cast<Element*>(smem_raw);
  Element* sV = sK + Traits::kRowTileElems;
  Element* sgK = sV + Traits::kRowTileElems;
  Element* sgV = sgK + Traits::kRowTileElems;
  Element* sStages = sK + Smem::kResident;  // stage s: Q, dO, gQ
  Element* sPGC = sStages + Traits::kStages * Smem::kPerStage;
  Element* sdS = sPGC + Traits::kScoreTileElems;
  Element* sdS2 = sdS + Traits::kScoreTileElems;
  float* sStats = reinterpret_cast<float*>(sK + Smem::kElems);  // stage s: L, D, c, e [kN]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % Traits::kWarpsM, wn = warp / Traits::kWarpsM;
  const int T = p.T;
  const int hk = blockIdx.y, b = blockIdx.z, group = p.H / p.Hkv;
  const int j0 = blockIdx.x * kM;
  const int num_m = (T + kN - 1) / kN;
  const int m_begin = p.causal ? j0 / kN : 0;  // first query tile that sees key j0
  const int per_head = num_m - m_begin;
  const int steps = group * per_head;

  LoadRowsAsync<Traits, kM>(sK, HeadBase<Element>(p.k, b, hk), p.k.st, j0, T, tid);
  LoadRowsAsync<Traits, kM>(sV, HeadBase<Element>(p.v, b, hk), p.v.st, j0, T, tid);
  LoadRowsAsync<Traits, kM>(sgK, HeadBase<Element>(p.gk, b, hk), p.gk.st, j0, T, tid);
  LoadRowsAsync<Traits, kM>(sgV, HeadBase<Element>(p.gv, b, hk), p.gv.st, j0, T, tid);
  CpAsyncCommit();
  // Step s: query head h = hk·group + s / per_head, query tile m_begin + s % per_head.
  auto load_queries = [&](int stage, int step) {
    const int h = hk * group + step / per_head, i0 = (m_begin + step % per_head) * kN;
    Element* s = sStages + stage * Smem::kPerStage;
    LoadRowsAsync<Traits, kN>(s, HeadBase<Element>(p.q, b, h), p.q.st, i0, T, tid);
    LoadRowsAsync<Traits, kN>(s + Traits::kColTileElems, HeadBase<Element>(p.dout, b, h), p.dout.st,
                              i0, T, tid);
    LoadRowsAsync<Traits, kN>(s + 2 * Traits::kColTileElems, HeadBase<Element>(p.gq, b, h), p.gq.st,
                              i0, T, tid);
    // Threads 0 .. 4·kN − 1 load one statistic each: all 256 at kN = 64, half at kN = 32.
    static_assert(4 * Traits::kBlockN <= Traits::kThreads, "one statistic per thread");
    if (tid < 4 * kN) {
      const int which = tid / kN, r = tid % kN, i = i0 + r;
      const float* stat = which == 0 ? p.lse : which == 1 ? p.dvec : which == 2 ? p.c : p.e;
      const int64_t at = (static_cast<int64_t>(b) * p.H + h) * T + i;
      float* dst = sStats + stage * Smem::kStatFloats + which * kN + r;
      CpAsync4(dst, i < T ? stat + at : stat, i < T);
    }
    CpAsyncCommit();
  };

  float dk_acc[Traits::kAccBlocks][4] = {}, dv_acc[Traits::kAccBlocks][4] = {};

  if constexpr (Traits::kStages == 2) load_queries(0, 0);
  for (int step = 0; step < steps; ++step) {
    if constexpr (Traits::kStages == 2) {
      if (step + 1 < steps) {
        load_queries((step + 1) & 1, step + 1);  // prefetch the next query tile
        CpAsyncWait<1>();
      } else {
        CpAsyncWait<0>();
      }
    } else {
      load_queries(0, step);
      CpAsyncWait<0>();
    }
    __syncthreads();
    const int stage = step % Traits::kStages;
    const Element* sQ = sStages + stage * Smem::kPerStage;
    const Element* sdO = sQ + Traits::kColTileElems;
    const Element* sgQ = sdO + Traits::kColTileElems;
    const float* sL = sStats + stage * Smem::kStatFloats;
    const float* sD = sL + kN;
    const float* sC = sD + kN;
    const float* sE = sC + kN;
    const int i0 = (m_begin + step % per_head) * kN;

    // ---- phase A: the warp's 16 (keys) × kWarpScoreCols (queries) slice of Sᵀ, Gᵀ,
    // dPᵀ, Bᵀ, in rounds of kRoundBlocks n8 blocks (see BobTraits) ----
    constexpr int kRound = Traits::kRoundBlocks;
#pragma unroll
    for (int round = 0; round < Traits::kScoreBlocks / kRound; ++round) {
      const int n_round = wn * Traits::kWarpScoreCols + round * kRound * Traits::kMmaN;
      float s_acc[kRound][4] = {}, g_acc[kRound][4] = {}, dp_acc[kRound][4] = {};
      float b_acc[kRound][4] = {};
      // The five products of one (m16, n8) block at one k step.
      auto mma5 = [&](int x, const uint32_t (&ak)[4], const uint32_t (&av)[4],
                      const uint32_t (&agk)[4], const uint32_t (&agv)[4], const uint32_t (&bq)[4],
                      const uint32_t (&bdo)[4], const uint32_t (&bgq)[4], int y) {
        Mma::Mma(s_acc[x], ak, bq[2 * y], bq[2 * y + 1]);     // Sᵀ = K Qᵀ
        Mma::Mma(g_acc[x], ak, bgq[2 * y], bgq[2 * y + 1]);   // (1)ᵀ: K gQᵀ
        Mma::Mma(g_acc[x], agk, bq[2 * y], bq[2 * y + 1]);    // (1)ᵀ: + gK Qᵀ
        Mma::Mma(dp_acc[x], av, bdo[2 * y], bdo[2 * y + 1]);  // dPᵀ = V dOᵀ
        Mma::Mma(b_acc[x], agv, bdo[2 * y], bdo[2 * y + 1]);  // (2)ᵀ: Bᵀ = gV dOᵀ
      };
      if constexpr (kRound >= 2) {
#pragma unroll
        for (int kk = 0; kk < Traits::kScoreKSteps; ++kk) {
          uint32_t ak[4], av[4], agk[4], agv[4];
          LoadA<D>(ak, sK, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
          LoadA<D>(av, sV, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
          LoadA<D>(agk, sgK, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
          LoadA<D>(agv, sgV, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
#pragma unroll
          for (int np = 0; np < kRound / 2; ++np) {
            const int n0 = n_round + np * 2 * Traits::kMmaN;
            uint32_t bq[4], bdo[4], bgq[4];
            LoadBFromNK<D>(bq, sQ, n0, kk * Traits::kMmaK, lane);
            LoadBFromNK<D>(bdo, sdO, n0, kk * Traits::kMmaK, lane);
            LoadBFromNK<D>(bgq, sgQ, n0, kk * Traits::kMmaK, lane);
#pragma unroll
            for (int y = 0; y < 2; ++y) mma5(2 * np + y, ak, av, agk, agv, bq, bdo, bgq, y);
          }
        }
      } else {  // one n8 block a warp (D = 256): B fragments for two k steps per load
#pragma unroll
        for (int kk = 0; kk < Traits::kScoreKSteps; kk += 2) {
          uint32_t bq[4], bdo[4], bgq[4];  // y = 0, 1: k steps kk, kk + 1
          LoadBFromNKTwoK<D>(bq, sQ, n_round, kk * Traits::kMmaK, lane);
          LoadBFromNKTwoK<D>(bdo, sdO, n_round, kk * Traits::kMmaK, lane);
          LoadBFromNKTwoK<D>(bgq, sgQ, n_round, kk * Traits::kMmaK, lane);
#pragma unroll
          for (int y = 0; y < 2; ++y) {
            uint32_t ak[4], av[4], agk[4], agv[4];
            LoadA<D>(ak, sK, wm * Traits::kMmaM, (kk + y) * Traits::kMmaK, lane);
            LoadA<D>(av, sV, wm * Traits::kMmaM, (kk + y) * Traits::kMmaK, lane);
            LoadA<D>(agk, sgK, wm * Traits::kMmaM, (kk + y) * Traits::kMmaK, lane);
            LoadA<D>(agv, sgV, wm * Traits::kMmaM, (kk + y) * Traits::kMmaK, lane);
            mma5(0, ak, av, agk, agv, bq, bdo, bgq, y);
          }
        }
      }
      // Element-wise with the query column's L, D, c, e.
#pragma unroll
      for (int x = 0; x < kRound; ++x) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r = wm * Traits::kMmaM + FragRow(lane, 2 * half);
          const int col = n_round + x * Traits::kMmaN + FragCol(lane, 0);
          const int j = j0 + r;
          float pgc[2], dsv[2], ds2[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int idx = 2 * half + e, ci = col + e, i = i0 + ci;
            const bool visible = i < T && j < T && (!p.causal || j <= i);
            // Masked entries are 0 by selection; rows past T read L = 0 and are masked.
            const float P =
                visible ? exp2f(s_acc[x][idx] * p.scale_log2 - sL[ci] * kLog2e) : 0.0f;
            const float G = g_acc[x][idx] * p.scale;
            const float dp_minus_d = dp_acc[x][idx] - sD[ci];
            const float H = dp_minus_d * G - sC[ci] * dp_acc[x][idx] + b_acc[x][idx];  // (4)
            dsv[e] = P * dp_minus_d;
            ds2[e] = P * (H - sE[ci]);  // (11)
            pgc[e] = P * (G - sC[ci]);  // (10)
          }
          StorePair<kS>(sPGC, r, col, pgc[0], pgc[1]);
          StorePair<kS>(sdS, r, col, dsv[0], dsv[1]);
          StorePair<kS>(sdS2, r, col, ds2[0], ds2[1]);
        }
      }
    }
    __syncthreads();

    // ---- phase B: the warp's 16 × D/kWarpsN slice of ∂V and ∂K over all kN queries ----
#pragma unroll
    for (int kk = 0; kk < Traits::kAccKSteps; ++kk) {
      uint32_t apgc[4], ads[4], ads2[4];
      LoadA<kS>(apgc, sPGC, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
      LoadA<kS>(ads, sdS, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
      LoadA<kS>(ads2, sdS2, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
#pragma unroll
      for (int np = 0; np < Traits::kAccBlocks / 2; ++np) {
        const int d0 = wn * Traits::kWarpAccCols + np * 2 * Traits::kMmaN;
        uint32_t bdo[4], bgq[4], bq[4];
        LoadBFromKN<D>(bdo, sdO, kk * Traits::kMmaK, d0, lane);
        LoadBFromKN<D>(bgq, sgQ, kk * Traits::kMmaK, d0, lane);
        LoadBFromKN<D>(bq, sQ, kk * Traits::kMmaK, d0, lane);
#pragma unroll
        for (int x = 0; x < 2; ++x) {
          const int nb = 2 * np + x;
          Mma::Mma(dv_acc[nb], apgc, bdo[2 * x], bdo[2 * x + 1]);  // (10)
          Mma::Mma(dk_acc[nb], ads, bgq[2 * x], bgq[2 * x + 1]);   // (14): dSᵀ gQ
          Mma::Mma(dk_acc[nb], ads2, bq[2 * x], bq[2 * x + 1]);    // (14): ∂Sᵀ Q
        }
      }
    }
    __syncthreads();  // the next step overwrites this stage and the score tiles
  }

  Element* ddk = HeadBaseOut<Element>(p.ddk, b, hk);
  Element* ddv = HeadBaseOut<Element>(p.ddv, b, hk);
#pragma unroll
  for (int nb = 0; nb < Traits::kAccBlocks; ++nb) {
    const int d = wn * Traits::kWarpAccCols + nb * Traits::kMmaN + FragCol(lane, 0);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int j = j0 + wm * Traits::kMmaM + FragRow(lane, 2 * half);
      if (j >= T) continue;
      *reinterpret_cast<uint32_t*>(ddk + static_cast<int64_t>(j) * p.ddk.st + d) =
          Mma::Pack(p.scale * dk_acc[nb][2 * half], p.scale * dk_acc[nb][2 * half + 1]);  // (14)
      *reinterpret_cast<uint32_t*>(ddv + static_cast<int64_t>(j) * p.ddv.st + d) =
          Mma::Pack(dv_acc[nb][2 * half], dv_acc[nb][2 * half + 1]);
    }
  }
}

}  // namespace flashtick::cuda::bob
