// Flash attention backward for Hopper (sm_90a) on warpgroup MMA (wgmma.cuh): the
// FlashAttention-2 backward of flash_bwd_kernel.cuh (one CTA per key block, dK and dV
// resident, query blocks streamed, dQ by fp32 atomics) with its five GEMMs on wgmma, in
// the transposed form FlashAttention-3 uses (Shah et al. 2024, §3 and its backward):
// each warpgroup owns 64 keys, and computes Sᵀ and dPᵀ (keys × queries) rather than S and
// dP, so Pᵀ and dSᵀ come out of the accumulators in the A-register layout dV and dK need:
//   Sᵀ = K·Qᵀ          A = K (shared, K-major), B = Q (shared, K-major)
//   Pᵀ = exp(scale·Sᵀ − L[query]), 0 where masked
//   dPᵀ = V·dOᵀ        A = V, B = dO (shared, K-major)
//   dSᵀ = Pᵀ∘(dPᵀ − D[query])
//   dV += Pᵀ·dO        A = Pᵀ (registers), B = dO (shared, MN-major: D is N)
//   dK += dSᵀ·Q        A = dSᵀ (registers), B = Q (shared, MN-major)
//   dQ_acc += dS·K     A = dS: dSᵀ stored [keys × queries] and read MN-major;
//                      B = K (shared, MN-major); this warpgroup's 64 keys, atomics to dQ_acc
// Tiles are 128-byte-swizzled 64-column blocks copied by cp.async and fenced to the
// async proxy (flash_fwd_sm90.cuh). Q, dO, L and D of the next query block load during
// this one, double-buffered as in FA2. D = 64; one query block is 64 rows.
// Not yet here: TMA, warp specialization, D = 128, the dQ reduction without atomics.
#pragma once

#include <cmath>

#include "kernels/cuda/attention/flash_bwd_kernel.cuh"
#include "kernels/cuda/attention/flash_params.h"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.cuh"
#include "kernels/cuda/attention/sm90/wgmma.cuh"

namespace flashtick::cuda::sm90 {

using flash::AttentionBwdParams;

template <int kHeadDim_, int kWarpgroups_>
struct FlashBwdSm90Traits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kWarpgroups = kWarpgroups_;
  static constexpr int kBlockN = 64 * kWarpgroups;  // keys per CTA, 64 a warpgroup
  static constexpr int kBlockM = 64;                // query rows per streamed block
  static constexpr int kNThreads = kWarpgroupThreads * kWarpgroups;
  static constexpr int kTileQBytes = kBlockM * kHeadDim * 2;   // Q, dO: two buffers each
  static constexpr int kTileKVBytes = kBlockN * kHeadDim * 2;  // K, V
  static constexpr int kTileDsBytes = kBlockN * kBlockM * 2;   // dSᵀ [keys × queries]
  static constexpr int kStatBytes = kBlockM * 4;               // L, D rows: two buffers each
  static constexpr int kSmemBytes =
      4 * kTileQBytes + 2 * kTileKVBytes + kTileDsBytes + 4 * kStatBytes + 1024;
  static_assert(kHeadDim == 64, "m64n64k16 with D = 64 (one 128-byte swizzle row)");
  static_assert(kBlockM <= kNThreads, "one thread per row loads L and D");
};

template <typename Traits, typename Elem, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 1)
    flash_bwd_sm90_kernel(const AttentionBwdParams p) {
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN;
  constexpr int kThreads = Traits::kNThreads;
  using flash::FastExp2;
  using flash::kLog2e;
  using flash::PackFloat2;
  using flash::UnpackFloat2;

  FLASH_DYNAMIC_SMEM(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - SmemAddress(smem_raw) % 1024) % 1024);
  unsigned char* sQ = smem;                                // [2] × [kBlockM × D]
  unsigned char* sdO = sQ + 2 * Traits::kTileQBytes;       // [2] × [kBlockM × D]
  unsigned char* sK = sdO + 2 * Traits::kTileQBytes;       // [kBlockN × D]
  unsigned char* sV = sK + Traits::kTileKVBytes;           // [kBlockN × D]
  unsigned char* sdS = sV + Traits::kTileKVBytes;          // dSᵀ [kBlockN × kBlockM]
  float* sL = reinterpret_cast<float*>(sdS + Traits::kTileDsBytes);  // [2][kBlockM]
  float* sD = sL + 2 * kBlockM;                                        // [2][kBlockM]

  const int tid = threadIdx.x, wg = tid / kWarpgroupThreads;
  const int lane = tid % 32, warp = (tid % kWarpgroupThreads) / 32, g = lane / 4, t = lane % 4;
  const int n_block = blockIdx.y, hk = blockIdx.x % p.Hkv, b = blockIdx.x / p.Hkv;
  const int T = p.T, n0 = n_block * kBlockN;
  const int key0 = n0 + wg * 64 + warp * 16 + g;  // this thread's keys: key0 and key0 + 8
  // Causal: query blocks wholly before key n0 see none of this block.
  const int m_begin = kCausal ? n0 / kBlockM : 0;
  const int n_m = (T + kBlockM - 1) / kBlockM - m_begin;
  const int n_iters = p.group * n_m;  // (query head of the group) × (query block)

  CopySw128TileAsync<kBlockN, 1, kThreads>(
      sK, static_cast<const Elem*>(p.k.ptr) + b * p.k.batch_stride + hk * p.k.head_stride +
              static_cast<int64_t>(n0) * p.k.row_stride,
      p.k.row_stride, T - n0, tid);
  CopySw128TileAsync<kBlockN, 1, kThreads>(
      sV, static_cast<const Elem*>(p.v.ptr) + b * p.v.batch_stride + hk * p.v.head_stride +
              static_cast<int64_t>(n0) * p.v.row_stride,
      p.v.row_stride, T - n0, tid);
  auto load_q_do = [&](int it, int buf) {
    const int h = hk * p.group + it / n_m;
    const int m0 = (m_begin + it % n_m) * kBlockM;
    CopySw128TileAsync<kBlockM, 1, kThreads>(
        sQ + buf * Traits::kTileQBytes,
        static_cast<const Elem*>(p.q.ptr) + b * p.q.batch_stride + h * p.q.head_stride +
            static_cast<int64_t>(m0) * p.q.row_stride,
        p.q.row_stride, T - m0, tid);
    CopySw128TileAsync<kBlockM, 1, kThreads>(
        sdO + buf * Traits::kTileQBytes,
        static_cast<const Elem*>(p.dout.ptr) + b * p.dout.batch_stride + h * p.dout.head_stride +
            static_cast<int64_t>(m0) * p.dout.row_stride,
        p.dout.row_stride, T - m0, tid);
    flash::CopyRowStatsAsync<kBlockM>(sL + buf * kBlockM, sD + buf * kBlockM, p, b, h, m0, T, tid);
  };
  if (n_iters > 0) load_q_do(0, 0);
  flash::CpAsyncCommit();

  // This warpgroup's 64 rows of K and V (A operands), K-major; the streamed Q and dO as
  // B, K-major for Sᵀ and dPᵀ (a k16 step: 32 bytes along a row) and MN-major for dV and
  // dK (a k16 step: 16 query rows, 2,048 bytes); dSᵀ as A of dQ, MN-major.
  const uint64_t desc_k = GmmaDesc(SmemAddress(sK + wg * 64 * 128), SmemSwizzle::k128B, 16, 1024);
  const uint64_t desc_v = GmmaDesc(SmemAddress(sV + wg * 64 * 128), SmemSwizzle::k128B, 16, 1024);
  const uint64_t desc_ds = GmmaDesc(SmemAddress(sdS + wg * 64 * 128), SmemSwizzle::k128B, 8192, 1024);
  const uint64_t desc_k_mn = GmmaDesc(SmemAddress(sK + wg * 64 * 128), SmemSwizzle::k128B, 8192, 1024);

  float acc_dk[32], acc_dv[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc_dk[i] = acc_dv[i] = 0.0f;

  for (int it = 0; it < n_iters; ++it) {
    const int buf = it % 2;
    const int h = hk * p.group + it / n_m;
    const int m0 = (m_begin + it % n_m) * kBlockM;
    flash::CpAsyncWait<0>();
    FenceProxyAsync();
    __syncthreads();  // Q(it), dO(it) (and K, V) landed; every warpgroup is done with it − 1,
                      // so buffer buf^1 and sdS may be overwritten
    if (it + 1 < n_iters) {
      load_q_do(it + 1, buf ^ 1);
      flash::CpAsyncCommit();
    }
    unsigned char* sQb = sQ + buf * Traits::kTileQBytes;
    unsigned char* sdOb = sdO + buf * Traits::kTileQBytes;
    const uint64_t desc_q = GmmaDesc(SmemAddress(sQb), SmemSwizzle::k128B, 16, 1024);
    const uint64_t desc_do = GmmaDesc(SmemAddress(sdOb), SmemSwizzle::k128B, 16, 1024);
    const uint64_t desc_q_mn = GmmaDesc(SmemAddress(sQb), SmemSwizzle::k128B, 8192, 1024);
    const uint64_t desc_do_mn = GmmaDesc(SmemAddress(sdOb), SmemSwizzle::k128B, 8192, 1024);

    // Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ, both 64 keys × 64 queries, issued together.
    float acc_s[32], acc_dp[32];
    WgmmaFence();
#pragma unroll
    for (int ks = 0; ks < Traits::kHeadDim / 16; ++ks)
      Wgmma64x64Ss<Elem, false>(acc_s, GmmaDescAdvance(desc_k, 32 * ks), GmmaDescAdvance(desc_q, 32 * ks),
                                ks > 0);
#pragma unroll
    for (int ks = 0; ks < Traits::kHeadDim / 16; ++ks)
      Wgmma64x64Ss<Elem, false>(acc_dp, GmmaDescAdvance(desc_v, 32 * ks), GmmaDescAdvance(desc_do, 32 * ks),
                                ks > 0);
    WgmmaCommit();
    WgmmaWait<0>();

    // Pᵀ and dSᵀ in registers, packed to Elem (the A layout of dV and dK, and dSᵀ's
    // stores). Element (key, query) of the accumulators: key = key0 + 8·(v / 2), query =
    // m0 + 8j + 2t + v % 2. Padding queries (≥ T) take L = +inf, so P = 0; a query with
    // no visible key has L = −inf by contract and must give P = 0 too.
    const float* lse = sL + buf * kBlockM;
    const float* dvec = sD + buf * kBlockM;
    const bool need_mask = n0 + kBlockN > T || m0 + kBlockM > T || (kCausal && n0 + kBlockN - 1 > m0);
    uint32_t p_frag[4][4], ds_frag[4][4];
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float pv[2], dsv[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = 8 * j + 2 * t + e, query = m0 + col, key = key0 + 8 * half;
          const float l = lse[col];
          const float lse_log2 = query >= T || l == -INFINITY ? INFINITY : l * kLog2e;
          float pij = FastExp2(acc_s[4 * j + 2 * half + e] * p.scale_log2 - lse_log2);
          if (need_mask && (key >= T || query >= T || (kCausal && key > query))) pij = 0.0f;
          pv[e] = pij;
          const float d_i = query < T ? dvec[col] : 0.0f;
          dsv[e] = pij * (acc_dp[4 * j + 2 * half + e] - d_i);
        }
        // j = 2ks + (0|1), half 0|1: the A fragment registers of k16 step ks.
        p_frag[j / 2][2 * (j % 2) + half] = PackFloat2<Elem>(pv[0], pv[1]);
        ds_frag[j / 2][2 * (j % 2) + half] = PackFloat2<Elem>(dsv[0], dsv[1]);
      }
    // dSᵀ to shared memory, row key (this warpgroup's 64), column query, swizzled, for dQ.
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = wg * 64 + warp * 16 + g + 8 * half, col = 8 * j + 2 * t;
        *reinterpret_cast<uint32_t*>(sdS + Sw128Offset(row, col)) = ds_frag[j / 2][2 * (j % 2) + half];
      }
    FenceProxyAsync();
    __syncthreads();  // dSᵀ complete for every warpgroup (each reads only its own rows, but
                      // the async proxy must see the stores)

    // dV += Pᵀ·dO, dK += dSᵀ·Q (keys × D, over the block's queries), and this
    // warpgroup's part of dQ: dS·K over its 64 keys (queries × D).
    float acc_dq[32];
    WgmmaFence();
#pragma unroll
    for (int ks = 0; ks < kBlockM / 16; ++ks)
      Wgmma64x64Rs<Elem, true>(acc_dv, p_frag[ks], GmmaDescAdvance(desc_do_mn, 2048 * ks), true);
#pragma unroll
    for (int ks = 0; ks < kBlockM / 16; ++ks)
      Wgmma64x64Rs<Elem, true>(acc_dk, ds_frag[ks], GmmaDescAdvance(desc_q_mn, 2048 * ks), true);
#pragma unroll
    for (int ks = 0; ks < 64 / 16; ++ks)
      Wgmma64x64Ss<Elem, true, true>(acc_dq, GmmaDescAdvance(desc_ds, 2048 * ks),
                                     GmmaDescAdvance(desc_k_mn, 2048 * ks), ks > 0);
    WgmmaCommit();
    WgmmaWait<0>();

    // dQ_acc[query rows] += dS·K: element (query m0 + 16w + g + 8·(v / 2), d = 8j + 2t + v % 2).
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m0 + warp * 16 + g + 8 * half;
      if (row >= T) continue;
      float* dq_row = p.dq_accum + ((static_cast<int64_t>(b) * T + row) * p.H + h) * Traits::kHeadDim;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        atomicAdd(dq_row + 8 * j + 2 * t, acc_dq[4 * j + 2 * half]);
        atomicAdd(dq_row + 8 * j + 2 * t + 1, acc_dq[4 * j + 2 * half + 1]);
      }
    }
  }

  // Epilogue: dK = scale·dSᵀQ (the scale applied once here), dV as accumulated.
  Elem* gdK = static_cast<Elem*>(p.dk.ptr) + b * p.dk.batch_stride + hk * p.dk.head_stride;
  Elem* gdV = static_cast<Elem*>(p.dv.ptr) + b * p.dv.batch_stride + hk * p.dv.head_stride;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = key0 + 8 * half;
    if (row >= T) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int col = 8 * j + 2 * t;
      *reinterpret_cast<uint32_t*>(gdK + static_cast<int64_t>(row) * p.dk.row_stride + col) =
          PackFloat2<Elem>(acc_dk[4 * j + 2 * half] * p.scale, acc_dk[4 * j + 2 * half + 1] * p.scale);
      *reinterpret_cast<uint32_t*>(gdV + static_cast<int64_t>(row) * p.dv.row_stride + col) =
          PackFloat2<Elem>(acc_dv[4 * j + 2 * half], acc_dv[4 * j + 2 * half + 1]);
    }
  }
}

}  // namespace flashtick::cuda::sm90
