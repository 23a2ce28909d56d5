// FlashBoB pass 1: query rows resident (docs/derivations/attention_bwd_bwd.md §3).
// One CTA per (kBlockM query rows, head h, batch b). For every visible key tile j:
//   phase A  S = Q Kᵀ, dP = dO Vᵀ, G = s(gQ Kᵀ + Q gKᵀ) (1), B = dO gVᵀ (2);
//            P = exp2(S·s·log2e − L·log2e), dS = P∘(dP − D), X = dS∘G + P∘B (6),
//            c += Σ_j P∘G (3), a += Σ_j X (7); P, dS, P∘G, X → shared (16-bit)
//   phase B  Y_dO += P gV + (P∘G) V (9);  Y_Q += dS gK + X K;  Z1 += dS K;  Z2 += P K (13′)
// End of row: e = a − c·D (8);  ∂dO = Y_dO − c̃·O (9);  ∂Q = s(Y_Q − c·Z1 − ã·Z2) (13′);
// writes ∂dO, ∂Q and the row states c, e. The corrections use sums of the 16-bit values
// the products actually consumed (c̃ = Σ r(P∘G); ã makes Σ_j r(X) − c·r(dS) − ã·r(P) = 0,
// as Σ_j ∂S_ij = 0 exactly), so rounding errors enter as Σ_j δ_j (V_j − O_i) and
// Σ_j ε_j (K_j − K̄) and cancel where the exact output does (T = 1: ∂Q = 0, ∂dO = gV).
// Causal: key tiles past the diagonal are never visited; row tiles run last-first so the
// longest CTAs start first.
// Legend: i query row, j key row, g = lane/4, t = lane%4 (fragment coordinates).
#pragma once

#include "kernels/cuda/attention/bwd_bwd/bob_traits.cuh"

namespace flashtick::cuda::bob {

template <typename Traits>
struct Pass1Smem {
  static constexpr int kResident = 3 * Traits::kRowTileElems;  // Q, dO, gQ
  static constexpr int kPerStage = 4 * Traits::kColTileElems;  // K, V, gK, gV
  static constexpr int kScores = 4 * Traits::kScoreTileElems;  // P, dS, P∘G, X
  static constexpr int kElems = kResident + Traits::kStages * kPerStage + kScores;
  static constexpr int kRowSums = 6;  // see RowSum below
  static constexpr int kRowFloats = kRowSums * Traits::kWarpsN * Traits::kBlockM;
  static constexpr size_t kBytes = size_t{kElems} * 2 + size_t{kRowFloats} * 4;
};

template <typename Element, typename Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) bob_pass1_kernel(const BobParams p) {
  using Mma = ElementTraits<Element>;
  constexpr int D = Traits::kHeadDim, kM = Traits::kBlockM, kN = Traits::kBlockN;
  constexpr int kS = Traits::kScoreCols;  // row length of the score tiles
  using Smem = Pass1Smem<Traits>;
  FLASH_DYNAMIC_SMEM(smem_raw);
  Element* sQ = reinterpret_cast<Element*>(smem_raw);
  Element* sdO = sQ + Traits::kRowTileElems;
  Element* sgQ = sdO + Traits::kRowTileElems;
  Element* sStages = sQ + Smem::kResident;  // stage s: K, V, gK, gV
  Element* sP = sStages + Traits::kStages * Smem::kPerStage;
  Element* sdS = sP + Traits::kScoreTileElems;
  Element* sPG = sdS + Traits::kScoreTileElems;
  Element* sX = sPG + Traits::kScoreTileElems;
  float* sRow = reinterpret_cast<float*>(sQ + Smem::kElems);  // [kNumRowSums][kWarpsN][kM]
  static_assert(Smem::kRowSums == kNumRowSums, "shared row-sum slots");

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % Traits::kWarpsM, wn = warp / Traits::kWarpsM;
  const int T = p.T;
  const int num_m = (T + kM - 1) / kM, num_n = (T + kN - 1) / kN;
  const int m_block = p.causal ? num_m - 1 - blockIdx.x : blockIdx.x;  // heavy tiles first
  const int h = blockIdx.y, b = blockIdx.z, hk = h / (p.H / p.Hkv);    // GQA: K/V head
  const int i0 = m_block * kM;
  const int64_t stat0 = (static_cast<int64_t>(b) * p.H + h) * T;  // [B, H, T] row base
  // Key tiles this row tile sees: all, or (causal) up to the one holding its last row.
  const int last_row = min(i0 + kM, T) - 1;
  const int n_end = p.causal ? last_row / kN + 1 : num_n;

  const Element* q = HeadBase<Element>(p.q, b, h);
  const Element* dout = HeadBase<Element>(p.dout, b, h);
  const Element* gq = HeadBase<Element>(p.gq, b, h);
  const Element* k = HeadBase<Element>(p.k, b, hk);
  const Element* v = HeadBase<Element>(p.v, b, hk);
  const Element* gk = HeadBase<Element>(p.gk, b, hk);
  const Element* gv = HeadBase<Element>(p.gv, b, hk);

  LoadRowsAsync<Traits, kM>(sQ, q, p.q.st, i0, T, tid);
  LoadRowsAsync<Traits, kM>(sdO, dout, p.dout.st, i0, T, tid);
  LoadRowsAsync<Traits, kM>(sgQ, gq, p.gq.st, i0, T, tid);
  CpAsyncCommit();
  auto load_keys = [&](int stage, int n) {
    Element* s = sStages + stage * Smem::kPerStage;
    const int j0 = n * kN;
    LoadRowsAsync<Traits, kN>(s, k, p.k.st, j0, T, tid);
    LoadRowsAsync<Traits, kN>(s + Traits::kColTileElems, v, p.v.st, j0, T, tid);
    LoadRowsAsync<Traits, kN>(s + 2 * Traits::kColTileElems, gk, p.gk.st, j0, T, tid);
    LoadRowsAsync<Traits, kN>(s + 3 * Traits::kColTileElems, gv, p.gv.st, j0, T, tid);
    CpAsyncCommit();
  };

  // This thread's two fragment rows (g and g + 8 of the warp's slab) and their stats.
  float lse_log2[2], dvec[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int i = i0 + wm * Traits::kMmaM + FragRow(lane, 2 * half);
    lse_log2[half] = i < T ? p.lse[stat0 + i] * kLog2e : 0.0f;  // log2e folded once per row
    dvec[half] = i < T ? p.dvec[stat0 + i] : 0.0f;
  }

  float y_do[Traits::kAccBlocks][4] = {}, y_q[Traits::kAccBlocks][4] = {};
  float z1[Traits::kAccBlocks][4] = {}, z2[Traits::kAccBlocks][4] = {};
  float part[kNumRowSums][2] = {};

  if constexpr (Traits::kStages == 2) load_keys(0, 0);
  for (int n = 0; n < n_end; ++n) {
    if constexpr (Traits::kStages == 2) {
      if (n + 1 < n_end) {
        load_keys((n + 1) & 1, n + 1);  // prefetch the next key tile during this one
        CpAsyncWait<1>();
      } else {
        CpAsyncWait<0>();
      }
    } else {
      load_keys(0, n);
      CpAsyncWait<0>();
    }
    __syncthreads();
    const Element* sK = sStages + (n % Traits::kStages) * Smem::kPerStage;
    const Element* sV = sK + Traits::kColTileElems;
    const Element* sgK = sV + Traits::kColTileElems;
    const Element* sgV = sgK + Traits::kColTileElems;
    const int j0 = n * kN;

    // ---- phase A: the warp's 16 × kWarpScoreCols slice of S, G, dP, B, in rounds of
    // kRoundBlocks n8 blocks (all 4 at D = 64: the Q, dO, gQ fragments are loaded once
    // per k step; 2 at D = 128: 32 fp32 score registers live instead of 64 beside 128
    // accumulators; the one block at D = 256, its K, V, gK, gV fragments loaded once per
    // pair of k steps).
    constexpr int kRound = Traits::kRoundBlocks;
#pragma unroll
    for (int round = 0; round < Traits::kScoreBlocks / kRound; ++round) {
      const int n_round = wn * Traits::kWarpScoreCols + round * kRound * Traits::kMmaN;
      float s_acc[kRound][4] = {}, g_acc[kRound][4] = {}, dp_acc[kRound][4] = {};
      float b_acc[kRound][4] = {};
      // The five products of one (m16, n8) block at one k step.
      auto mma5 = [&](int x, const uint32_t (&aq)[4], const uint32_t (&ado)[4],
                      const uint32_t (&agq)[4], const uint32_t (&bk)[4], const uint32_t (&bv)[4],
                      const uint32_t (&bgk)[4], const uint32_t (&bgv)[4], int y) {
        Mma::Mma(s_acc[x], aq, bk[2 * y], bk[2 * y + 1]);     // S = Q Kᵀ
        Mma::Mma(g_acc[x], agq, bk[2 * y], bk[2 * y + 1]);    // (1): gQ Kᵀ
        Mma::Mma(g_acc[x], aq, bgk[2 * y], bgk[2 * y + 1]);   // (1): + Q gKᵀ
        Mma::Mma(dp_acc[x], ado, bv[2 * y], bv[2 * y + 1]);   // dP = dO Vᵀ
        Mma::Mma(b_acc[x], ado, bgv[2 * y], bgv[2 * y + 1]);  // (2): B = dO gVᵀ
      };
      if constexpr (kRound >= 2) {
#pragma unroll
        for (int kk = 0; kk < Traits::kScoreKSteps; ++kk) {
          uint32_t aq[4], ado[4], agq[4];
          LoadA<D>(aq, sQ, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
          LoadA<D>(ado, sdO, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
          LoadA<D>(agq, sgQ, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
#pragma unroll
          for (int np = 0; np < kRound / 2; ++np) {
            const int n0 = n_round + np * 2 * Traits::kMmaN;
            uint32_t bk[4], bv[4], bgk[4], bgv[4];
            LoadBFromNK<D>(bk, sK, n0, kk * Traits::kMmaK, lane);
            LoadBFromNK<D>(bv, sV, n0, kk * Traits::kMmaK, lane);
            LoadBFromNK<D>(bgk, sgK, n0, kk * Traits::kMmaK, lane);
            LoadBFromNK<D>(bgv, sgV, n0, kk * Traits::kMmaK, lane);
#pragma unroll
            for (int y = 0; y < 2; ++y) mma5(2 * np + y, aq, ado, agq, bk, bv, bgk, bgv, y);
          }
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < Traits::kScoreKSteps; kk += 2) {
          uint32_t bk[4], bv[4], bgk[4], bgv[4];  // y = 0, 1: k steps kk, kk + 1
          LoadBFromNKTwoK<D>(bk, sK, n_round, kk * Traits::kMmaK, lane);
          LoadBFromNKTwoK<D>(bv, sV, n_round, kk * Traits::kMmaK, lane);
          LoadBFromNKTwoK<D>(bgk, sgK, n_round, kk * Traits::kMmaK, lane);
          LoadBFromNKTwoK<D>(bgv, sgV, n_round, kk * Traits::kMmaK, lane);
#pragma unroll
          for (int y = 0; y < 2; ++y) {
            uint32_t aq[4], ado[4], agq[4];
            LoadA<D>(aq, sQ, wm * Traits::kMmaM, (kk + y) * Traits::kMmaK, lane);
            LoadA<D>(ado, sdO, wm * Traits::kMmaM, (kk + y) * Traits::kMmaK, lane);
            LoadA<D>(agq, sgQ, wm * Traits::kMmaM, (kk + y) * Traits::kMmaK, lane);
            mma5(0, aq, ado, agq, bk, bv, bgk, bgv, y);
          }
        }
      }
      // Element-wise: P from L, then dS, X, P∘G; row partial sums; 16-bit tiles.
#pragma unroll
      for (int x = 0; x < kRound; ++x) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r = wm * Traits::kMmaM + FragRow(lane, 2 * half);
          const int col = n_round + x * Traits::kMmaN + FragCol(lane, 0);
          const int i = i0 + r;
          float pv[2], dsv[2], pgv[2], xv[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int idx = 2 * half + e, j = j0 + col + e;
            const bool visible = i < T && j < T && (!p.causal || j <= i);
            // Masked entries are set to 0 here, never computed from exp of a garbage L.
            const float P = visible ? exp2f(s_acc[x][idx] * p.scale_log2 - lse_log2[half]) : 0.0f;
            const float G = g_acc[x][idx] * p.scale;
            const float dS = P * (dp_acc[x][idx] - dvec[half]);
            const float X = dS * G + P * b_acc[x][idx];  // (6)
            part[kSumC][half] += P * G;                  // (3)
            part[kSumA][half] += X;                      // (7)
            pv[e] = P, dsv[e] = dS, pgv[e] = P * G, xv[e] = X;
          }
          // Round once; the tiles and the correction sums see the same 16-bit values.
          const uint32_t rp = Mma::Pack(pv[0], pv[1]), rds = Mma::Pack(dsv[0], dsv[1]);
          const uint32_t rpg = Mma::Pack(pgv[0], pgv[1]), rx = Mma::Pack(xv[0], xv[1]);
          StorePacked<kS>(sP, r, col, rp);
          StorePacked<kS>(sdS, r, col, rds);
          StorePacked<kS>(sPG, r, col, rpg);
          StorePacked<kS>(sX, r, col, rx);
          const float2 fp = Mma::Unpack(rp), fds = Mma::Unpack(rds);
          const float2 fpg = Mma::Unpack(rpg), fx = Mma::Unpack(rx);
          part[kSumPR][half] += fp.x + fp.y;
          part[kSumDSR][half] += fds.x + fds.y;
          part[kSumPGR][half] += fpg.x + fpg.y;
          part[kSumXR][half] += fx.x + fx.y;
        }
      }
    }
    __syncthreads();

    // ---- phase B: the warp's 16 × D/kWarpsN slice of Y_dO, Y_Q, Z1, Z2 over all kN keys ----
#pragma unroll
    for (int kk = 0; kk < Traits::kAccKSteps; ++kk) {
      uint32_t ap[4], ads[4], apg[4], ax[4];
      LoadA<kS>(ap, sP, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
      LoadA<kS>(ads, sdS, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
      LoadA<kS>(apg, sPG, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
      LoadA<kS>(ax, sX, wm * Traits::kMmaM, kk * Traits::kMmaK, lane);
#pragma unroll
      for (int np = 0; np < Traits::kAccBlocks / 2; ++np) {
        const int d0 = wn * Traits::kWarpAccCols + np * 2 * Traits::kMmaN;
        uint32_t bk[4], bv[4], bgk[4], bgv[4];
        LoadBFromKN<D>(bk, sK, kk * Traits::kMmaK, d0, lane);
        LoadBFromKN<D>(bv, sV, kk * Traits::kMmaK, d0, lane);
        LoadBFromKN<D>(bgk, sgK, kk * Traits::kMmaK, d0, lane);
        LoadBFromKN<D>(bgv, sgV, kk * Traits::kMmaK, d0, lane);
#pragma unroll
        for (int x = 0; x < 2; ++x) {
          const int nb = 2 * np + x;
          Mma::Mma(y_do[nb], ap, bgv[2 * x], bgv[2 * x + 1]);  // (9): P gV
          Mma::Mma(y_do[nb], apg, bv[2 * x], bv[2 * x + 1]);   // (9): (P∘G) V
          Mma::Mma(y_q[nb], ads, bgk[2 * x], bgk[2 * x + 1]);  // (13′): dS gK
          Mma::Mma(y_q[nb], ax, bk[2 * x], bk[2 * x + 1]);     // (13′): X K
          Mma::Mma(z1[nb], ads, bk[2 * x], bk[2 * x + 1]);     // (13′): dS K
          Mma::Mma(z2[nb], ap, bk[2 * x], bk[2 * x + 1]);      // (13′): P K
        }
      }
    }
    __syncthreads();  // the next step overwrites this stage and the score tiles
  }

  // ---- end of row: complete the row sums, then the corrections (8), (9), (13′) ----
#pragma unroll
  for (int sum = 0; sum < kNumRowSums; ++sum) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      // The four lanes of a quad hold one row's columns: reduce over t.
      float v = part[sum][half];
      v += __shfl_xor_sync(0xffffffffu, v, 1);
      v += __shfl_xor_sync(0xffffffffu, v, 2);
      const int r = wm * Traits::kMmaM + FragRow(lane, 2 * half);
      if ((lane & 3) == 0) sRow[(sum * Traits::kWarpsN + wn) * kM + r] = v;
    }
  }
  __syncthreads();
  float row[kNumRowSums][2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = wm * Traits::kMmaM + FragRow(lane, 2 * half);
#pragma unroll
    for (int sum = 0; sum < kNumRowSums; ++sum) {
      row[sum][half] = 0.0f;
#pragma unroll
      for (int w = 0; w < Traits::kWarpsN; ++w)  // the column halves of the row
        row[sum][half] += sRow[(sum * Traits::kWarpsN + w) * kM + r];
    }
    const int i = i0 + r;
    if (wn == 0 && (lane & 3) == 0 && i < T) {
      p.c[stat0 + i] = row[kSumC][half];
      p.e[stat0 + i] = row[kSumA][half] - row[kSumC][half] * dvec[half];  // (8)
    }
  }
  const Element* o = HeadBase<Element>(p.o, b, h);
  Element* ddq = HeadBaseOut<Element>(p.ddq, b, h);
  Element* dddo = HeadBaseOut<Element>(p.dddo, b, h);
#pragma unroll
  for (int nb = 0; nb < Traits::kAccBlocks; ++nb) {
    const int d = wn * Traits::kWarpAccCols + nb * Traits::kMmaN + FragCol(lane, 0);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int i = i0 + wm * Traits::kMmaM + FragRow(lane, 2 * half);
      if (i >= T) continue;
      const float2 oi =
          Mma::Unpack(*reinterpret_cast<const uint32_t*>(o + static_cast<int64_t>(i) * p.o.st + d));
      const float c = row[kSumC][half], c_r = row[kSumPGR][half];
      // ã: Σ_j [r(X) − c·r(dS) − ã·r(P)]_ij = 0 (rows past T have Σ r(P) = 0; not stored).
      const float p_r = row[kSumPR][half];
      const float a_r = p_r > 0.0f ? (row[kSumXR][half] - c * row[kSumDSR][half]) / p_r : 0.0f;
      float ddo[2], dq[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int idx = 2 * half + e;
        ddo[e] = y_do[nb][idx] - c_r * (e == 0 ? oi.x : oi.y);                   // (9)
        dq[e] = p.scale * (y_q[nb][idx] - c * z1[nb][idx] - a_r * z2[nb][idx]);  // (13′)
      }
      *reinterpret_cast<uint32_t*>(dddo + static_cast<int64_t>(i) * p.dddo.st + d) =
          Mma::Pack(ddo[0], ddo[1]);
      *reinterpret_cast<uint32_t*>(ddq + static_cast<int64_t>(i) * p.ddq.st + d) =
          Mma::Pack(dq[0], dq[1]);
    }
  }
}

}  // namespace flashtick::cuda::bob
