// Flash attention backward, main kernel (FlashAttention-2, Alg. 2): one CTA owns
// kBlockN keys of one (b, kv head), keeps K, V and the dK, dV accumulators resident,
// and streams every (query head of the GQA group, query block) that sees its keys.
// Per streamed block, with P recomputed from the stored L (never stored in global):
//   S = Q Kᵀ;  P = exp(scale·S − L);  dP = dO Vᵀ;  dS = P∘(dP − D)
//   dV += Pᵀ dO;  dK += dSᵀ Q;  dQ_acc += dS K   (fp32 atomics; dK, dQ scaled at the end)
// dQ choice: fp32 atomics into a [B, T, H, D] accumulator, as FA2, rather than a second
// kernel over query blocks; the second kernel would recompute S and dP (7 block GEMMs
// per tile instead of 5, ~1.4× the backward's tensor work). The price is run-to-run
// bit differences in dQ (atomic order); dK and dV are deterministic.
// Q and dO, and the block's rows of L and D, are double-buffered: the next block loads
// by cp.async during this one's 5 GEMMs (loading L and D from global memory after the
// S GEMM left two L2 latencies exposed per block).
// P and dS go through shared memory: dV and dK need them transposed (Pᵀ, dSᵀ as the
// A operand), which the S accumulator layout cannot give from registers.
#pragma once

#include <cmath>

#include "kernels/cuda/attention/flash_params.h"
#include "kernels/cuda/attention/flash_tiles.cuh"

namespace flashtick::cuda::flash {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kNWarps_, int kWarpsMSdP_,
          int kWarpsNdKV_, int kWarpsMdQ_, int kMinBlocksPerSm_ = 1>
struct FlashBwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;  // query rows per streamed block
  static constexpr int kBlockN = kBlockN_;  // keys per CTA
  static constexpr int kNWarps = kNWarps_;
  static constexpr int kNThreads = kNWarps * kWarpSize;
  // 1: 256 threads × ≤ 255 registers fill the SM; 2 caps registers at 128 per thread.
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;
  // k steps in flight per GEMM (WarpGemm): 2 removed the spills of the full unroll.
  static constexpr int kUnrollK = 2;
  // S and dP [kBlockM × kBlockN]: kWarpsMSdP × kWarpsNSdP warps.
  static constexpr int kWarpsMSdP = kWarpsMSdP_;
  static constexpr int kWarpsNSdP = kNWarps / kWarpsMSdP;
  static constexpr int kSdPWarpM = kBlockM / kWarpsMSdP;
  static constexpr int kSdPWarpN = kBlockN / kWarpsNSdP;
  static constexpr int kSdPMT = kSdPWarpM / 16, kSdPNT = kSdPWarpN / 8;
  static constexpr int kSdPKSteps = kHeadDim / 16;
  // dK and dV [kBlockN × kHeadDim]: kWarpsNdKV × kWarpsDdKV warps.
  static constexpr int kWarpsNdKV = kWarpsNdKV_;
  static constexpr int kWarpsDdKV = kNWarps / kWarpsNdKV;
  static constexpr int kdKVWarpN = kBlockN / kWarpsNdKV;
  static constexpr int kdKVWarpD = kHeadDim / kWarpsDdKV;
  static constexpr int kdKVMT = kdKVWarpN / 16, kdKVNT = kdKVWarpD / 8;
  static constexpr int kdKVKSteps = kBlockM / 16;
  // dQ [kBlockM × kHeadDim]: kWarpsMdQ × kWarpsDdQ warps.
  static constexpr int kWarpsMdQ = kWarpsMdQ_;
  static constexpr int kWarpsDdQ = kNWarps / kWarpsMdQ;
  static constexpr int kdQWarpM = kBlockM / kWarpsMdQ;
  static constexpr int kdQWarpD = kHeadDim / kWarpsDdQ;
  static constexpr int kdQMT = kdQWarpM / 16, kdQNT = kdQWarpD / 8;
  static constexpr int kdQKSteps = kBlockN / 16;

  using TileQ = SmemTile<kBlockM, kHeadDim>;   // Q and dO, two buffers each
  using TileKV = SmemTile<kBlockN, kHeadDim>;  // K and V
  using TileP = SmemTile<kBlockM, kBlockN>;    // P and dS
  static constexpr int kElemBytes = 2;
  static constexpr int kStatBytes = 4;  // fp32 L and D rows, two buffers each
  static constexpr int kSmemBytes =
      (4 * TileQ::kElems + 2 * TileKV::kElems + 2 * TileP::kElems) * kElemBytes +
      4 * kBlockM * kStatBytes;
  static constexpr int kMaxSmemSm80 = 163 * 1024;  // sm_80's per-block opt-in limit

  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256,
                "instantiated for D ∈ {64, 128, 256}");
  static_assert(kNWarps % kWarpsMSdP == 0 && kNWarps % kWarpsNdKV == 0 && kNWarps % kWarpsMdQ == 0,
                "each GEMM's warp grid uses every warp");
  static_assert(kSdPWarpM % 16 == 0 && kSdPWarpN % 16 == 0, "S/dP warp tiles: whole m16, paired n8");
  static_assert(kdKVWarpN % 16 == 0 && kdKVWarpD % 16 == 0, "dK/dV warp tiles: whole m16, paired n8");
  static_assert(kdQWarpM % 16 == 0 && kdQWarpD % 16 == 0, "dQ warp tiles: whole m16, paired n8");
  static_assert(kSmemBytes <= kMaxSmemSm80, "must fit one CTA per SM on sm_80");
  static_assert(kBlockM <= kNThreads, "one thread per row loads L and D");
};

// The L and D of query rows m0 .. m0 + kBlockM − 1 of head (b, h) into sL and sD by
// cp.async, one row per thread tid < kBlockM (T: the sequence length, p.T); rows ≥ T read as 0 (the kernels give them
// P = 0, so those values are never used). Shared by every backward main kernel.
template <int kBlockM>
__device__ __forceinline__ void CopyRowStatsAsync(float* sL, float* sD, const AttentionBwdParams& p,
                                                  int b, int h, int m0, int T, int tid) {
  if (tid < kBlockM) {
    const int64_t stat = (static_cast<int64_t>(b) * p.H + h) * T + m0;
    const bool valid = m0 + tid < T;
    CpAsync4(sL + tid, p.lse + stat + (valid ? tid : 0), valid);
    CpAsync4(sD + tid, p.dvec + stat + (valid ? tid : 0), valid);
  }
}

template <typename Traits, typename Elem, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, Traits::kMinBlocksPerSm)
    flash_bwd_kernel(const AttentionBwdParams p) {
  using TileQ = typename Traits::TileQ;
  using TileKV = typename Traits::TileKV;
  using TileP = typename Traits::TileP;
  using Tr = Traits;
  constexpr int kBlockM = Tr::kBlockM, kBlockN = Tr::kBlockN, kNThreads = Tr::kNThreads;

  FLASH_DYNAMIC_SMEM(smem);
  Elem* sQ = reinterpret_cast<Elem*>(smem);  // [2][kBlockM][D]
  Elem* sdO = sQ + 2 * TileQ::kElems;         // [2][kBlockM][D]
  Elem* sK = sdO + 2 * TileQ::kElems;         // [kBlockN][D]
  Elem* sV = sK + TileKV::kElems;             // [kBlockN][D]
  Elem* sP = sV + TileKV::kElems;             // [kBlockM][kBlockN]
  Elem* sdS = sP + TileP::kElems;             // [kBlockM][kBlockN]
  float* sL = reinterpret_cast<float*>(sdS + TileP::kElems);  // [2][kBlockM]: L of the rows
  float* sD = sL + 2 * kBlockM;                                // [2][kBlockM]: D of the rows

  const int tid = threadIdx.x, lane = tid % kWarpSize, warp = tid / kWarpSize;
  // Grid (B·Hkv, key blocks): dispatch runs x fastest, so every head's key block 0 (the
  // most query blocks under causal masking) starts first and the short ones fill the tail.
  const int n_block = blockIdx.y, hk = blockIdx.x % p.Hkv, b = blockIdx.x / p.Hkv;
  const int T = p.T, n0 = n_block * kBlockN;
  // Causal: query blocks wholly before key n0 see none of this block.
  const int m_begin = kCausal ? n0 / kBlockM : 0;
  const int n_m = (T + kBlockM - 1) / kBlockM - m_begin;
  const int n_iters = p.group * n_m;  // (query head of the group) × (query block)

  // Warp positions in the three GEMM grids.
  const int s_row0 = (warp / Tr::kWarpsNSdP) * Tr::kSdPWarpM;
  const int s_col0 = (warp % Tr::kWarpsNSdP) * Tr::kSdPWarpN;
  const int kv_row0 = (warp / Tr::kWarpsDdKV) * Tr::kdKVWarpN;
  const int kv_col0 = (warp % Tr::kWarpsDdKV) * Tr::kdKVWarpD;
  const int q_row0 = (warp / Tr::kWarpsDdQ) * Tr::kdQWarpM;
  const int q_col0 = (warp % Tr::kWarpsDdQ) * Tr::kdQWarpD;

  CopyTileAsync<TileKV, kNThreads>(
      sK, static_cast<const Elem*>(p.k.ptr) + b * p.k.batch_stride + hk * p.k.head_stride +
              static_cast<int64_t>(n0) * p.k.row_stride,
      p.k.row_stride, T - n0, tid);
  CopyTileAsync<TileKV, kNThreads>(
      sV, static_cast<const Elem*>(p.v.ptr) + b * p.v.batch_stride + hk * p.v.head_stride +
              static_cast<int64_t>(n0) * p.v.row_stride,
      p.v.row_stride, T - n0, tid);
  auto load_q_do = [&](int it, int buf) {
    const int h = hk * p.group + it / n_m;
    const int m0 = (m_begin + it % n_m) * kBlockM;
    CopyTileAsync<TileQ, kNThreads>(
        sQ + buf * TileQ::kElems,
        static_cast<const Elem*>(p.q.ptr) + b * p.q.batch_stride + h * p.q.head_stride +
            static_cast<int64_t>(m0) * p.q.row_stride,
        p.q.row_stride, T - m0, tid);
    CopyTileAsync<TileQ, kNThreads>(
        sdO + buf * TileQ::kElems,
        static_cast<const Elem*>(p.dout.ptr) + b * p.dout.batch_stride + h * p.dout.head_stride +
            static_cast<int64_t>(m0) * p.dout.row_stride,
        p.dout.row_stride, T - m0, tid);
    CopyRowStatsAsync<kBlockM>(sL + buf * kBlockM, sD + buf * kBlockM, p, b, h, m0, T, tid);
  };
  if (n_iters > 0) load_q_do(0, 0);
  CpAsyncCommit();

  float acc_dk[Tr::kdKVMT][Tr::kdKVNT][4], acc_dv[Tr::kdKVMT][Tr::kdKVNT][4];
  ZeroAcc(acc_dk);
  ZeroAcc(acc_dv);

  for (int it = 0; it < n_iters; ++it) {
    const int buf = it % 2;
    const int h = hk * p.group + it / n_m;
    const int m0 = (m_begin + it % n_m) * kBlockM;
    const Elem* sQb = sQ + buf * TileQ::kElems;
    const Elem* sdOb = sdO + buf * TileQ::kElems;
    CpAsyncWait<0>();
    __syncthreads();  // Q(it), dO(it) (and K, V) landed; all warps are done with it−1,
                      // so buffer buf^1, sP and sdS may be overwritten
    if (it + 1 < n_iters) {
      load_q_do(it + 1, buf ^ 1);
      CpAsyncCommit();
    }

    // S = Q Kᵀ and dP = dO Vᵀ, in the same warp layout so dS is elementwise. P is packed
    // to Elem and stored as soon as it exists, so only its 16-bit copy stays live
    // through the dP GEMM (the fp32 S and dP together pushed the kernel into spills).
    float acc_s[Tr::kSdPMT][Tr::kSdPNT][4];
    ZeroAcc(acc_s);
    WarpGemm<Elem, Tr::kSdPMT, Tr::kSdPNT, Tr::kSdPKSteps, Tr::kUnrollK>(
        acc_s,
        [&](uint32_t(&a)[4], int mt, int ks) { LoadA<TileQ>(a, sQb, s_row0 + mt * 16, ks * 16, lane); },
        [&](uint32_t(&b4)[4], int np, int ks) { LoadBnk<TileKV>(b4, sK, s_col0 + np * 16, ks * 16, lane); });

    // P = exp2(scale_log2·S − L·log2 e) (exp2 with log2 e folded into the scale), 0 where
    // masked, rounded to Elem: the P of dV = Pᵀ dO and of dS below (as a bf16 kernel
    // that stores P would use it).
    const float* lse = sL + buf * kBlockM;  // rows m0 .. m0 + kBlockM − 1
    const float* dvec = sD + buf * kBlockM;
    const bool need_mask = n0 + kBlockN > T || (kCausal && n0 + kBlockN - 1 > m0);
    uint32_t p_pack[Tr::kSdPMT][Tr::kSdPNT][2];
#pragma unroll
    for (int mt = 0; mt < Tr::kSdPMT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + s_row0 + AccRow(mt, 2 * half, lane);
        // Padding rows (≥ T) get L = +inf so P = exp2(−inf) = 0. A row with no visible
        // key has L = −inf by contract; it too must give P = 0, not exp2(+inf).
        float lse_log2 = INFINITY;
        if (row < T) {
          const float l = lse[row - m0];
          lse_log2 = l == -INFINITY ? INFINITY : l * kLog2e;
        }
#pragma unroll
        for (int nt = 0; nt < Tr::kSdPNT; ++nt) {
          float pij[2];
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const int e = 2 * half + j;
            pij[j] = FastExp2(acc_s[mt][nt][e] * p.scale_log2 - lse_log2);
            if (need_mask) {
              const int col = n0 + s_col0 + AccCol(nt, e, lane);
              if (col >= T || (kCausal && col > row)) pij[j] = 0.0f;
            }
          }
          p_pack[mt][nt][half] = PackFloat2<Elem>(pij[0], pij[1]);
        }
      }
    StorePackedToSmem<TileP, Elem>(sP, p_pack, s_row0, s_col0, lane);

    float acc_dp[Tr::kSdPMT][Tr::kSdPNT][4];
    ZeroAcc(acc_dp);
    WarpGemm<Elem, Tr::kSdPMT, Tr::kSdPNT, Tr::kSdPKSteps, Tr::kUnrollK>(
        acc_dp,
        [&](uint32_t(&a)[4], int mt, int ks) { LoadA<TileQ>(a, sdOb, s_row0 + mt * 16, ks * 16, lane); },
        [&](uint32_t(&b4)[4], int np, int ks) { LoadBnk<TileKV>(b4, sV, s_col0 + np * 16, ks * 16, lane); });

    // dS = P∘(dP − D), packed in place of dP's first registers and stored. Masked
    // entries have P = 0, hence dS = 0.
#pragma unroll
    for (int mt = 0; mt < Tr::kSdPMT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + s_row0 + AccRow(mt, 2 * half, lane);
        const float d_i = row < T ? dvec[row - m0] : 0.0f;  // D of padding rows is unused (P = 0)
#pragma unroll
        for (int nt = 0; nt < Tr::kSdPNT; ++nt) {
          const float2 pv = UnpackFloat2<Elem>(p_pack[mt][nt][half]);
          p_pack[mt][nt][half] = PackFloat2<Elem>(pv.x * (acc_dp[mt][nt][2 * half] - d_i),
                                                  pv.y * (acc_dp[mt][nt][2 * half + 1] - d_i));
        }
      }
    StorePackedToSmem<TileP, Elem>(sdS, p_pack, s_row0, s_col0, lane);
    __syncthreads();  // P and dS complete for every warp

    // dV += Pᵀ dO and dK += dSᵀ Q  ([kBlockN × D], contraction over the query rows).
    WarpGemm<Elem, Tr::kdKVMT, Tr::kdKVNT, Tr::kdKVKSteps, Tr::kUnrollK>(
        acc_dv,
        [&](uint32_t(&a)[4], int mt, int ks) { LoadATrans<TileP>(a, sP, kv_row0 + mt * 16, ks * 16, lane); },
        [&](uint32_t(&b4)[4], int np, int ks) { LoadBkn<TileQ>(b4, sdOb, kv_col0 + np * 16, ks * 16, lane); });
    WarpGemm<Elem, Tr::kdKVMT, Tr::kdKVNT, Tr::kdKVKSteps, Tr::kUnrollK>(
        acc_dk,
        [&](uint32_t(&a)[4], int mt, int ks) { LoadATrans<TileP>(a, sdS, kv_row0 + mt * 16, ks * 16, lane); },
        [&](uint32_t(&b4)[4], int np, int ks) { LoadBkn<TileQ>(b4, sQb, kv_col0 + np * 16, ks * 16, lane); });

    // dQ_acc[rows of this block] += dS K  ([kBlockM × D], contraction over the keys).
    float acc_dq[Tr::kdQMT][Tr::kdQNT][4];
    ZeroAcc(acc_dq);
    WarpGemm<Elem, Tr::kdQMT, Tr::kdQNT, Tr::kdQKSteps, Tr::kUnrollK>(
        acc_dq,
        [&](uint32_t(&a)[4], int mt, int ks) { LoadA<TileP>(a, sdS, q_row0 + mt * 16, ks * 16, lane); },
        [&](uint32_t(&b4)[4], int np, int ks) { LoadBkn<TileKV>(b4, sK, q_col0 + np * 16, ks * 16, lane); });
#pragma unroll
    for (int mt = 0; mt < Tr::kdQMT; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = m0 + q_row0 + AccRow(mt, e, lane);
        if (row >= T) continue;
        float* dq_row = p.dq_accum + ((static_cast<int64_t>(b) * T + row) * p.H + h) * Tr::kHeadDim;
#pragma unroll
        for (int nt = 0; nt < Tr::kdQNT; ++nt)
          atomicAdd(dq_row + q_col0 + AccCol(nt, e, lane), acc_dq[mt][nt][e]);  // RED.ADD.F32
      }
  }

  // Epilogue: dK = scale·dSᵀ Q (scale applied once here), dV as accumulated.
  Elem* gdK = static_cast<Elem*>(p.dk.ptr) + b * p.dk.batch_stride + hk * p.dk.head_stride;
  Elem* gdV = static_cast<Elem*>(p.dv.ptr) + b * p.dv.batch_stride + hk * p.dv.head_stride;
#pragma unroll
  for (int mt = 0; mt < Tr::kdKVMT; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = n0 + kv_row0 + AccRow(mt, 2 * half, lane);
      if (row >= T) continue;
#pragma unroll
      for (int nt = 0; nt < Tr::kdKVNT; ++nt) {
        const int col = kv_col0 + AccCol(nt, 0, lane);
        *reinterpret_cast<uint32_t*>(gdK + static_cast<int64_t>(row) * p.dk.row_stride + col) =
            PackFloat2<Elem>(acc_dk[mt][nt][2 * half] * p.scale, acc_dk[mt][nt][2 * half + 1] * p.scale);
        *reinterpret_cast<uint32_t*>(gdV + static_cast<int64_t>(row) * p.dv.row_stride + col) =
            PackFloat2<Elem>(acc_dv[mt][nt][2 * half], acc_dv[mt][nt][2 * half + 1]);
      }
    }
}

}  // namespace flashtick::cuda::flash
