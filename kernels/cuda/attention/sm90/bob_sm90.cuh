// Backward-over-backward of attention (FlashBoB) for Hopper (sm_90a) on warpgroup MMA
// (wgmma.cuh): the two passes of docs/derivations/attention_bwd_bwd.md §3, with the
// equations and the rounding-aware end-of-row corrections (§5) of the mma.sync kernels
// (bwd_bwd/bob_pass1.cuh, bob_pass2.cuh), their 19 products moved onto wgmma. D = 64,
// bf16/fp16, causal or not, GQA, any strides the mma.sync kernels take.
//
// Pass 1, query rows resident: a CTA owns 64 query rows; its two warpgroups stream
// 64-key tiles of K, V, gK, gV (cp.async, double-buffered, 128-byte swizzle).
//   phase A: warpgroup w computes keys 32w..32w+31 of the tile, m64n32 wgmma with A = Q,
//     dO, gQ and B = K, V, gK, gV (shared, K-major): S, G = s(gQ Kᵀ + Q gKᵀ) (1),
//     dP, B = dO gVᵀ (2); then P, dS, X (6), P∘G and the row sums of (3), (7) and of the
//     16-bit values, as the mma.sync pass 1 does; P, dS, P∘G, X go to shared memory as
//     16-bit swizzled [64 × 64] tiles.
//   phase B: the six accumulating products split three and three, each warpgroup m64n64
//     with both operands from shared memory (scores K-major, the key tiles MN-major):
//     warpgroup 0: Y_dO += P gV + (P∘G) V (9), Z2 += P K;
//     warpgroup 1: Y_Q += dS gK + X K, Z1 += dS K (13′).
//   end of row: the row sums of both warpgroups are combined; warpgroup 0 writes ∂dO
//     (9), c and e (8), and hands ã·Z2 to warpgroup 1 through shared memory, which
//     writes ∂Q (13′).
// Pass 2, key rows resident: a CTA owns 128 keys, 64 a warpgroup, in the transposed form
// of flash_bwd_sm90.cuh; query blocks of 64 rows (Q, dO, gQ, and L, D, c, e) stream
// through two buffers. Per block and per half of 32 queries, m64n32 wgmma give Sᵀ, Gᵀ,
// dPᵀ, Bᵀ (keys × queries) in registers, whose accumulator layout is the A-register
// layout of the next GEMMs; P∘(G − c) (10), dS and ∂S (4, 11) are packed there and
//   ∂V += (P∘(G − c))ᵀ dO (10),  ∂K += dSᵀ gQ + ∂Sᵀ Q (14)
// run as m64n64 wgmma with A from registers and B (dO, gQ, Q) MN-major. No score tile
// touches shared memory in pass 2.
// The score GEMMs are m64n32 so that the 64 score accumulators a thread sit beside the
// 64 of the resident accumulators (pass 1: two m64n64 a warpgroup; pass 2: ∂K, ∂V) with
// room to spare; m64n64 scores would need 128.
// Not yet here: TMA, warp specialization, pingpong, D = 128 and 256.
#pragma once

#include <cmath>

#include "kernels/cuda/attention/bwd_bwd/bob_traits.cuh"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.cuh"
#include "kernels/cuda/attention/sm90/wgmma.cuh"

namespace flashtick::cuda::sm90 {

// Descriptors of a [rows × 64] 16-bit tile in the 128-byte swizzle (8-row atoms 1,024 bytes
// apart): K-major (a k16 step is 32 bytes along a row) and MN-major (the 64 columns are N;
// a k16 step is 16 rows, 2,048 bytes).
__device__ __forceinline__ uint64_t KMajorSw128(const unsigned char* tile) {
  return GmmaDesc(SmemAddress(tile), SmemSwizzle::k128B, 16, 1024);
}
__device__ __forceinline__ uint64_t MnMajorSw128(const unsigned char* tile) {
  return GmmaDesc(SmemAddress(tile), SmemSwizzle::k128B, 8192, 1024);
}

// The A-register fragments (wgmma.cuh, "Fragments") of one warpgroup's 64 rows, from
// row0 on, of a [rows × 64] tile in the 128-byte swizzle: k16 step ks, register x holds
// row warp·16 + g + 8·(x % 2) and the column pair 16·ks + 2t + 8·(x / 2).
__device__ __forceinline__ void LoadAFragmentsSw128(uint32_t (&f)[4][4], const unsigned char* tile, int row0,
                                                    int warp, int g, int t) {
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)
#pragma unroll
    for (int x = 0; x < 4; ++x)
      f[ks][x] = *reinterpret_cast<const uint32_t*>(
          tile + Sw128Offset(row0 + warp * 16 + g + 8 * (x % 2), 16 * ks + 2 * t + 8 * (x / 2)));
}

// One k16 step of a score GEMM whose A operand is either in shared memory (desc_a) or,
// in the register-operand variants, already in registers (frag[ks]); B is K-major.
template <typename Elem, bool kAInRegisters, int kSteps>
__device__ __forceinline__ void ScoreStep(float (&acc)[16], const uint32_t (&frag)[kSteps][4], uint64_t desc_a,
                                          uint64_t desc_b, int ks, bool accumulate) {
  if constexpr (kAInRegisters)
    Wgmma64x32Rs<Elem, false>(acc, frag[ks], GmmaDescAdvance(desc_b, 32 * ks), accumulate);
  else
    Wgmma64x32Ss<Elem, false>(acc, GmmaDescAdvance(desc_a, 32 * ks), GmmaDescAdvance(desc_b, 32 * ks), accumulate);
}

struct BobSm90Traits {
  static constexpr int kHeadDim = 64;  // one 128-byte swizzle row a tile row
  static constexpr int kWarpgroups = 2;
  static constexpr int kThreads = kWarpgroups * kWarpgroupThreads;
  static constexpr int kTileBytes = 64 * kHeadDim * 2;  // a [64 × 64] 16-bit tile
  // Pass 1: 64 query rows a CTA, 64-key tiles.
  static constexpr int kP1Rows = 64, kP1Keys = 64;
  static constexpr int kP1RowSums = bob::kNumRowSums;
  static constexpr int kP1SmemBytes = 3 * kTileBytes          // Q, dO, gQ
                                      + 2 * 4 * kTileBytes    // K, V, gK, gV, two buffers
                                      + 4 * kTileBytes        // P, dS, P∘G, X
                                      + kP1RowSums * kWarpgroups * kP1Rows * 4 + 1024;
  // Pass 2: 128 keys a CTA (64 a warpgroup), 64-row query blocks.
  static constexpr int kP2Keys = 64 * kWarpgroups, kP2Queries = 64;
  static constexpr int kP2SmemBytes = 4 * 2 * kTileBytes      // K, V, gK, gV [128 × 64]
                                      + 2 * 3 * kTileBytes    // Q, dO, gQ, two buffers
                                      + 2 * 4 * kP2Queries * 4  // L, D, c, e, two buffers
                                      + 1024;
  // The end-of-row exchange of pass 1 (ã·Z2, fp32 [64 × 68]) reuses the key buffers.
  static_assert(64 * 68 * 4 <= 2 * 4 * kTileBytes, "exchange fits the key buffers");
};

// Pass 1 (rows resident). Grid: (⌈T/64⌉, H, B). kQdoInRegisters: Q and dO, the A operand
// of four of the five score products for the whole CTA, are read once into registers
// (32 a thread), so those wgmma read only their B from shared memory.
template <typename Elem, bool kQdoInRegisters = false>
__global__ void __launch_bounds__(BobSm90Traits::kThreads, 1) bob_pass1_sm90_kernel(const BobParams p) {
  using Tr = BobSm90Traits;
  using Mma = bob::ElementTraits<Elem>;
  constexpr int kTile = Tr::kTileBytes, kThreads = Tr::kThreads;
  using flash::kLog2e;

  FLASH_DYNAMIC_SMEM(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - SmemAddress(smem_raw) % 1024) % 1024);
  unsigned char* sQ = smem;
  unsigned char* sdO = sQ + kTile;
  unsigned char* sgQ = sdO + kTile;
  unsigned char* sKeys = sgQ + kTile;      // buffer s: K, V, gK, gV at sKeys + (4s + x)·kTile
  unsigned char* sP = sKeys + 8 * kTile;   // score tiles [query × key]
  unsigned char* sdS = sP + kTile;
  unsigned char* sPG = sdS + kTile;
  unsigned char* sX = sPG + kTile;
  float* sRow = reinterpret_cast<float*>(sX + kTile);  // [kP1RowSums][wg][64]

  const int tid = threadIdx.x, wg = tid / kWarpgroupThreads;
  const int lane = tid % 32, warp = (tid % kWarpgroupThreads) / 32, g = lane / 4, t = lane % 4;
  const int T = p.T;
  const int num_m = (T + Tr::kP1Rows - 1) / Tr::kP1Rows;
  const int m_block = p.causal ? num_m - 1 - static_cast<int>(blockIdx.x) : static_cast<int>(blockIdx.x);
  const int h = blockIdx.y, b = blockIdx.z, hk = h / (p.H / p.Hkv);
  const int i0 = m_block * Tr::kP1Rows;
  const int64_t stat0 = (static_cast<int64_t>(b) * p.H + h) * T;
  const int last_row = min(i0 + Tr::kP1Rows, T) - 1;
  const int n_end = p.causal ? last_row / Tr::kP1Keys + 1 : (T + Tr::kP1Keys - 1) / Tr::kP1Keys;

  const Elem* k = bob::HeadBase<Elem>(p.k, b, hk);
  const Elem* v = bob::HeadBase<Elem>(p.v, b, hk);
  const Elem* gk = bob::HeadBase<Elem>(p.gk, b, hk);
  const Elem* gv = bob::HeadBase<Elem>(p.gv, b, hk);
  CopySw128TileAsync<64, 1, kThreads>(sQ, bob::HeadBase<Elem>(p.q, b, h) + int64_t{i0} * p.q.st,
                                      p.q.st, T - i0, tid);
  CopySw128TileAsync<64, 1, kThreads>(sdO, bob::HeadBase<Elem>(p.dout, b, h) + int64_t{i0} * p.dout.st,
                                      p.dout.st, T - i0, tid);
  CopySw128TileAsync<64, 1, kThreads>(sgQ, bob::HeadBase<Elem>(p.gq, b, h) + int64_t{i0} * p.gq.st,
                                      p.gq.st, T - i0, tid);
  auto load_keys = [&](int n, int buf) {
    const int j0 = n * Tr::kP1Keys;
    unsigned char* s = sKeys + 4 * buf * kTile;
    CopySw128TileAsync<64, 1, kThreads>(s, k + int64_t{j0} * p.k.st, p.k.st, T - j0, tid);
    CopySw128TileAsync<64, 1, kThreads>(s + kTile, v + int64_t{j0} * p.v.st, p.v.st, T - j0, tid);
    CopySw128TileAsync<64, 1, kThreads>(s + 2 * kTile, gk + int64_t{j0} * p.gk.st, p.gk.st, T - j0, tid);
    CopySw128TileAsync<64, 1, kThreads>(s + 3 * kTile, gv + int64_t{j0} * p.gv.st, p.gv.st, T - j0, tid);
  };
  if (n_end > 0) load_keys(0, 0);
  flash::CpAsyncCommit();

  // This thread's rows (warp·16 + g and + 8 of the 64; the same in both warpgroups).
  float lse_log2[2], dvec[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int i = i0 + warp * 16 + g + 8 * half;
    lse_log2[half] = i < T ? p.lse[stat0 + i] * kLog2e : 0.0f;
    dvec[half] = i < T ? p.dvec[stat0 + i] : 0.0f;
  }

  // Phase A operands: Q, dO, gQ as A (K-major, or Q and dO from registers); the
  // warpgroup's 32 keys as B (K-major).
  const uint64_t desc_q = KMajorSw128(sQ);
  const uint64_t desc_do = KMajorSw128(sdO);
  const uint64_t desc_gq = KMajorSw128(sgQ);
  constexpr int kFragSteps = kQdoInRegisters ? 4 : 1;
  uint32_t q_frag[kFragSteps][4], do_frag[kFragSteps][4];
  if constexpr (kQdoInRegisters) {
    flash::CpAsyncWait<0>();
    __syncthreads();  // Q, dO (and key tile 0) landed
    LoadAFragmentsSw128(q_frag, sQ, 0, warp, g, t);
    LoadAFragmentsSw128(do_frag, sdO, 0, warp, g, t);
  }
  // Phase B: this warpgroup's two score tiles as A (K-major over keys, a k16 step is 32
  // bytes along a row); warpgroup 0 reads P and P∘G, warpgroup 1 dS and X.
  const uint64_t desc_a1 = KMajorSw128(wg == 0 ? sP : sdS);
  const uint64_t desc_a2 = KMajorSw128(wg == 0 ? sPG : sX);

  // acc1: Y_dO (warpgroup 0) or Y_Q (1); acc2: Z2 (0) or Z1 (1).
  float acc1[32], acc2[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc1[i] = acc2[i] = 0.0f;
  float part[Tr::kP1RowSums][2] = {};  // indexed by bob::RowSum

  for (int n = 0; n < n_end; ++n) {
    const int buf = n % 2, j0 = n * Tr::kP1Keys;
    flash::CpAsyncWait<0>();
    FenceProxyAsync();
    __syncthreads();  // tile n (and Q, dO, gQ) landed; phase B of n − 1 is done everywhere
    if (n + 1 < n_end) {
      load_keys(n + 1, buf ^ 1);
      flash::CpAsyncCommit();
    }
    unsigned char* sK = sKeys + 4 * buf * kTile;
    unsigned char* sV = sK + kTile;
    unsigned char* sgK = sV + kTile;
    unsigned char* sgV = sgK + kTile;

    // ---- phase A: S, G, dP, B for this warpgroup's 32 keys ----
    const int key_row = wg * 32;  // 32 rows × 128 bytes: a multiple of the 1 KB atom
    const uint64_t desc_k = KMajorSw128(sK + key_row * 128);
    const uint64_t desc_v = KMajorSw128(sV + key_row * 128);
    const uint64_t desc_gk = KMajorSw128(sgK + key_row * 128);
    const uint64_t desc_gv = KMajorSw128(sgV + key_row * 128);
    float s_acc[16], g_acc[16], dp_acc[16], b_acc[16];
    WgmmaFence();
    auto score = [&](float(&acc)[16], const uint32_t(&frag)[kFragSteps][4], uint64_t desc_a,
                     uint64_t desc_b, int ks, bool accumulate) {  // X = Q or dO
      ScoreStep<Elem, kQdoInRegisters>(acc, frag, desc_a, desc_b, ks, accumulate);
    };
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) score(s_acc, q_frag, desc_q, desc_k, ks, ks > 0);  // S = Q Kᵀ
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)  // G/s = gQ Kᵀ + Q gKᵀ (1)
      Wgmma64x32Ss<Elem, false>(g_acc, GmmaDescAdvance(desc_gq, 32 * ks), GmmaDescAdvance(desc_k, 32 * ks), ks > 0);
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) score(g_acc, q_frag, desc_q, desc_gk, ks, true);
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) score(dp_acc, do_frag, desc_do, desc_v, ks, ks > 0);  // dP = dO Vᵀ
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) score(b_acc, do_frag, desc_do, desc_gv, ks, ks > 0);  // B = dO gVᵀ (2)
    WgmmaCommit();
    WgmmaWait<0>();

    // Element (query row r, key column col) of the accumulators: r = warp·16 + g + 8·half,
    // col = 32·wg + 8j + 2t + e at index 4j + 2·half + e.
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = warp * 16 + g + 8 * half, col = key_row + 8 * j + 2 * t, i = i0 + r;
        float pv[2], dsv[2], pgv[2], xv[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int idx = 4 * j + 2 * half + e, jj = j0 + col + e;
          const bool visible = i < T && jj < T && (!p.causal || jj <= i);
          // Masked entries are 0 by selection, never exp of a garbage L.
          const float P = visible ? flash::FastExp2(s_acc[idx] * p.scale_log2 - lse_log2[half]) : 0.0f;
          const float G = g_acc[idx] * p.scale;
          const float dS = P * (dp_acc[idx] - dvec[half]);
          const float X = dS * G + P * b_acc[idx];  // (6)
          part[bob::kSumC][half] += P * G;          // (3)
          part[bob::kSumA][half] += X;              // (7)
          pv[e] = P, dsv[e] = dS, pgv[e] = P * G, xv[e] = X;
        }
        // Rounded once: the tiles and the correction sums see the same 16-bit values.
        const uint32_t rp = Mma::Pack(pv[0], pv[1]), rds = Mma::Pack(dsv[0], dsv[1]);
        const uint32_t rpg = Mma::Pack(pgv[0], pgv[1]), rx = Mma::Pack(xv[0], xv[1]);
        const uint32_t at = Sw128Offset(r, col);
        *reinterpret_cast<uint32_t*>(sP + at) = rp;
        *reinterpret_cast<uint32_t*>(sdS + at) = rds;
        *reinterpret_cast<uint32_t*>(sPG + at) = rpg;
        *reinterpret_cast<uint32_t*>(sX + at) = rx;
        const float2 fp = Mma::Unpack(rp), fds = Mma::Unpack(rds);
        const float2 fpg = Mma::Unpack(rpg), fx = Mma::Unpack(rx);
        part[bob::kSumPR][half] += fp.x + fp.y;
        part[bob::kSumDSR][half] += fds.x + fds.y;
        part[bob::kSumPGR][half] += fpg.x + fpg.y;
        part[bob::kSumXR][half] += fx.x + fx.y;
      }
    FenceProxyAsync();
    __syncthreads();  // the four score tiles are complete and visible to the async proxy

    // ---- phase B: over the tile's 64 keys, K, V, gK, gV as MN-major B (D is N) ----
    const uint64_t desc_b1 = MnMajorSw128(wg == 0 ? sgV : sgK);  // gV | gK
    const uint64_t desc_b2 = MnMajorSw128(wg == 0 ? sV : sK);    // V | K
    const uint64_t desc_k_mn = MnMajorSw128(sK);
    WgmmaFence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      const uint64_t a1 = GmmaDescAdvance(desc_a1, 32 * ks), a2 = GmmaDescAdvance(desc_a2, 32 * ks);
      // Y_dO += P gV + (P∘G) V   |   Y_Q += dS gK + X K
      Wgmma64x64Ss<Elem, true>(acc1, a1, GmmaDescAdvance(desc_b1, 2048 * ks), true);
      Wgmma64x64Ss<Elem, true>(acc1, a2, GmmaDescAdvance(desc_b2, 2048 * ks), true);
      // Z2 += P K   |   Z1 += dS K
      Wgmma64x64Ss<Elem, true>(acc2, a1, GmmaDescAdvance(desc_k_mn, 2048 * ks), true);
    }
    WgmmaCommit();
    WgmmaWait<0>();
  }

  // ---- end of row: both warpgroups' row sums, then the corrections (8), (9), (13′) ----
#pragma unroll
  for (int sum = 0; sum < Tr::kP1RowSums; ++sum)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float x = part[sum][half];  // the quad's four lanes hold one row's columns
      x += __shfl_xor_sync(0xffffffffu, x, 1);
      x += __shfl_xor_sync(0xffffffffu, x, 2);
      if (t == 0) sRow[(sum * Tr::kWarpgroups + wg) * Tr::kP1Rows + warp * 16 + g + 8 * half] = x;
    }
  __syncthreads();  // also: every phase B is done, so the key buffers are free
  float row[Tr::kP1RowSums][2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = warp * 16 + g + 8 * half;
#pragma unroll
    for (int sum = 0; sum < Tr::kP1RowSums; ++sum)
      row[sum][half] = sRow[(sum * Tr::kWarpgroups) * Tr::kP1Rows + r] +
                       sRow[(sum * Tr::kWarpgroups + 1) * Tr::kP1Rows + r];
  }
  float* sEx = reinterpret_cast<float*>(sKeys);  // ã·Z2, [64 rows × 68]
  const Elem* o = bob::HeadBase<Elem>(p.o, b, h);
  Elem* ddq = bob::HeadBaseOut<Elem>(p.ddq, b, h);
  Elem* dddo = bob::HeadBaseOut<Elem>(p.dddo, b, h);
  if (wg == 0) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = warp * 16 + g + 8 * half, i = i0 + r;
      const float c = row[bob::kSumC][half], c_r = row[bob::kSumPGR][half];
      // ã: Σ_j [r(X) − c·r(dS) − ã·r(P)]_ij = 0 (rows past T have Σ r(P) = 0).
      const float p_r = row[bob::kSumPR][half];
      const float a_r = p_r > 0.0f ? (row[bob::kSumXR][half] - c * row[bob::kSumDSR][half]) / p_r : 0.0f;
      if (t == 0 && i < T) {
        p.c[stat0 + i] = c;
        p.e[stat0 + i] = row[bob::kSumA][half] - c * dvec[half];  // (8)
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int d = 8 * j + 2 * t;
        sEx[r * 68 + d] = a_r * acc2[4 * j + 2 * half];
        sEx[r * 68 + d + 1] = a_r * acc2[4 * j + 2 * half + 1];
        if (i >= T) continue;
        const float2 oi = Mma::Unpack(*reinterpret_cast<const uint32_t*>(o + int64_t{i} * p.o.st + d));
        *reinterpret_cast<uint32_t*>(dddo + int64_t{i} * p.dddo.st + d) =  // (9)
            Mma::Pack(acc1[4 * j + 2 * half] - c_r * oi.x, acc1[4 * j + 2 * half + 1] - c_r * oi.y);
      }
    }
  }
  __syncthreads();  // ã·Z2 is in shared memory
  if (wg == 1) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = warp * 16 + g + 8 * half, i = i0 + r;
      if (i >= T) continue;
      const float c = row[bob::kSumC][half];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int d = 8 * j + 2 * t;
        float dq[2];
#pragma unroll
        for (int e = 0; e < 2; ++e)  // (13′): s·(Y_Q − c·Z1 − ã·Z2)
          dq[e] = p.scale * (acc1[4 * j + 2 * half + e] - c * acc2[4 * j + 2 * half + e] - sEx[r * 68 + d + e]);
        *reinterpret_cast<uint32_t*>(ddq + int64_t{i} * p.ddq.st + d) = Mma::Pack(dq[0], dq[1]);
      }
    }
  }
}

// Pass 2 (keys resident). Grid: (⌈T/128⌉, Hkv, B). kKvInRegisters: the warpgroup's K and
// V, the A operand of three of the five score products for the whole CTA, are read once
// into registers (32 a thread), so those wgmma read only their B from shared memory.
template <typename Elem, bool kKvInRegisters = false>
__global__ void __launch_bounds__(BobSm90Traits::kThreads, 1) bob_pass2_sm90_kernel(const BobParams p) {
  using Tr = BobSm90Traits;
  using Mma = bob::ElementTraits<Elem>;
  constexpr int kTile = Tr::kTileBytes, kThreads = Tr::kThreads, kQ = Tr::kP2Queries;
  using flash::kLog2e;

  FLASH_DYNAMIC_SMEM(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - SmemAddress(smem_raw) % 1024) % 1024);
  unsigned char* sK = smem;  // [128 × 64] each: warpgroup w's keys at + w·kTile
  unsigned char* sV = sK + 2 * kTile;
  unsigned char* sgK = sV + 2 * kTile;
  unsigned char* sgV = sgK + 2 * kTile;
  unsigned char* sQs = sgV + 2 * kTile;  // buffer s: Q, dO, gQ at sQs + (3s + x)·kTile
  float* sStats = reinterpret_cast<float*>(sQs + 6 * kTile);  // buffer s: L, D, c, e [64] each

  const int tid = threadIdx.x, wg = tid / kWarpgroupThreads;
  const int lane = tid % 32, warp = (tid % kWarpgroupThreads) / 32, g = lane / 4, t = lane % 4;
  const int T = p.T, group = p.H / p.Hkv;
  const int hk = blockIdx.y, b = blockIdx.z;
  const int n0 = static_cast<int>(blockIdx.x) * Tr::kP2Keys;  // x ascending: heavy blocks first
  const int wg_key0 = n0 + wg * 64;
  const int key0 = wg_key0 + warp * 16 + g;  // this thread's keys: key0 and key0 + 8
  const int m_begin = p.causal ? n0 / kQ : 0;
  const int n_m = (T + kQ - 1) / kQ - m_begin;
  const int n_iters = group * n_m;  // (query head of the group) × (query block)

  auto load_resident = [&](unsigned char* dst, const BobOperand& x) {
    CopySw128TileAsync<128, 1, kThreads>(dst, bob::HeadBase<Elem>(x, b, hk) + int64_t{n0} * x.st, x.st,
                                         T - n0, tid);
  };
  load_resident(sK, p.k);
  load_resident(sV, p.v);
  load_resident(sgK, p.gk);
  load_resident(sgV, p.gv);
  auto load_queries = [&](int it, int buf) {
    const int h = hk * group + it / n_m, m0 = (m_begin + it % n_m) * kQ;
    unsigned char* s = sQs + 3 * buf * kTile;
    CopySw128TileAsync<64, 1, kThreads>(s, bob::HeadBase<Elem>(p.q, b, h) + int64_t{m0} * p.q.st, p.q.st,
                                        T - m0, tid);
    CopySw128TileAsync<64, 1, kThreads>(s + kTile, bob::HeadBase<Elem>(p.dout, b, h) + int64_t{m0} * p.dout.st,
                                        p.dout.st, T - m0, tid);
    CopySw128TileAsync<64, 1, kThreads>(s + 2 * kTile, bob::HeadBase<Elem>(p.gq, b, h) + int64_t{m0} * p.gq.st,
                                        p.gq.st, T - m0, tid);
    static_assert(4 * kQ == kThreads, "one statistic a thread");
    const int which = tid / kQ, r = tid % kQ, i = m0 + r;
    const float* stat = which == 0 ? p.lse : which == 1 ? p.dvec : which == 2 ? p.c : p.e;
    const int64_t at = (static_cast<int64_t>(b) * p.H + h) * T + i;
    flash::CpAsync4(sStats + (4 * buf + which) * kQ + r, i < T ? stat + at : stat, i < T);
  };
  if (n_iters > 0) load_queries(0, 0);
  flash::CpAsyncCommit();

  // This warpgroup's 64 keys as A (K-major).
  const uint64_t desc_k = KMajorSw128(sK + wg * kTile);
  const uint64_t desc_v = KMajorSw128(sV + wg * kTile);
  const uint64_t desc_gk = KMajorSw128(sgK + wg * kTile);
  const uint64_t desc_gv = KMajorSw128(sgV + wg * kTile);

  float acc_dk[32], acc_dv[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc_dk[i] = acc_dv[i] = 0.0f;
  constexpr int kFragSteps = kKvInRegisters ? 4 : 1;
  uint32_t k_frag[kFragSteps][4], v_frag[kFragSteps][4];
  if constexpr (kKvInRegisters) {
    flash::CpAsyncWait<0>();
    __syncthreads();  // the keys (and query block 0) landed
    LoadAFragmentsSw128(k_frag, sK, wg * 64, warp, g, t);
    LoadAFragmentsSw128(v_frag, sV, wg * 64, warp, g, t);
  }

  for (int it = 0; it < n_iters; ++it) {
    const int buf = it % 2;
    const int m0 = (m_begin + it % n_m) * kQ;
    flash::CpAsyncWait<0>();
    FenceProxyAsync();
    __syncthreads();  // block it landed (and the keys); every warpgroup is done with it − 1
    if (it + 1 < n_iters) {
      load_queries(it + 1, buf ^ 1);
      flash::CpAsyncCommit();
    }
    // Causal: a query block wholly before this warpgroup's first key adds nothing. No
    // barrier follows in this iteration, so the warpgroup may skip it alone.
    if (p.causal && m0 + kQ - 1 < wg_key0) continue;
    unsigned char* sQb = sQs + 3 * buf * kTile;
    unsigned char* sdOb = sQb + kTile;
    unsigned char* sgQb = sdOb + kTile;
    const float* sL = sStats + 4 * buf * kQ;
    const float* sD = sL + kQ;
    const float* sC = sD + kQ;
    const float* sE = sC + kQ;
    // MN-major views of the block (D is N, a k16 step is 16 query rows: 2,048 bytes).
    const uint64_t desc_q_mn = MnMajorSw128(sQb);
    const uint64_t desc_do_mn = MnMajorSw128(sdOb);
    const uint64_t desc_gq_mn = MnMajorSw128(sgQb);

#pragma unroll 1
    for (int qh = 0; qh < 2; ++qh) {
      if (p.causal && m0 + 32 * qh + 31 < wg_key0) continue;
      // The half's 32 query rows as B, K-major (32 rows × 128 bytes from the block start).
      const uint64_t desc_q = KMajorSw128(sQb + qh * 4096);
      const uint64_t desc_do = KMajorSw128(sdOb + qh * 4096);
      const uint64_t desc_gq = KMajorSw128(sgQb + qh * 4096);
      float s_acc[16], g_acc[16], dp_acc[16], b_acc[16];
      WgmmaFence();
      auto score = [&](float(&acc)[16], const uint32_t(&frag)[kFragSteps][4], uint64_t desc_a,
                       uint64_t desc_b, int ks, bool accumulate) {  // X = K or V
        ScoreStep<Elem, kKvInRegisters>(acc, frag, desc_a, desc_b, ks, accumulate);
      };
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) score(s_acc, k_frag, desc_k, desc_q, ks, ks > 0);  // Sᵀ = K Qᵀ
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) score(g_acc, k_frag, desc_k, desc_gq, ks, ks > 0);  // Gᵀ/s = K gQᵀ
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)  // + gK Qᵀ (1)
        Wgmma64x32Ss<Elem, false>(g_acc, GmmaDescAdvance(desc_gk, 32 * ks), GmmaDescAdvance(desc_q, 32 * ks), true);
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) score(dp_acc, v_frag, desc_v, desc_do, ks, ks > 0);  // dPᵀ = V dOᵀ
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)  // Bᵀ = gV dOᵀ (2)
        Wgmma64x32Ss<Elem, false>(b_acc, GmmaDescAdvance(desc_gv, 32 * ks), GmmaDescAdvance(desc_do, 32 * ks), ks > 0);
      WgmmaCommit();
      WgmmaWait<0>();

      // Element (key, query) at index 4j + 2·half + e: key = key0 + 8·half, query column
      // qi = 32·qh + 8j + 2t + e of the block; packed straight into the A fragments of the
      // k16 steps of this half (j = 2·ks + (0|1)).
      uint32_t pgc_frag[2][4], ds_frag[2][4], ds2_frag[2][4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int key = key0 + 8 * half;
          float pgc[2], dsv[2], ds2[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int idx = 4 * j + 2 * half + e, qi = 32 * qh + 8 * j + 2 * t + e, query = m0 + qi;
            const bool visible = key < T && query < T && (!p.causal || key <= query);
            const float P = visible ? flash::FastExp2(s_acc[idx] * p.scale_log2 - sL[qi] * kLog2e) : 0.0f;
            const float G = g_acc[idx] * p.scale;
            const float dp_minus_d = dp_acc[idx] - sD[qi];
            const float H = dp_minus_d * G - sC[qi] * dp_acc[idx] + b_acc[idx];  // (4)
            dsv[e] = P * dp_minus_d;
            ds2[e] = P * (H - sE[qi]);  // (11)
            pgc[e] = P * (G - sC[qi]);  // (10)
          }
          pgc_frag[j / 2][2 * (j % 2) + half] = Mma::Pack(pgc[0], pgc[1]);
          ds_frag[j / 2][2 * (j % 2) + half] = Mma::Pack(dsv[0], dsv[1]);
          ds2_frag[j / 2][2 * (j % 2) + half] = Mma::Pack(ds2[0], ds2[1]);
        }
      WgmmaFence();
#pragma unroll
      for (int ks = 0; ks < 2; ++ks) {
        const uint32_t rows = 2048 * (2 * qh + ks);  // the k16 step's 16 query rows
        Wgmma64x64Rs<Elem, true>(acc_dv, pgc_frag[ks], GmmaDescAdvance(desc_do_mn, rows), true);  // (10)
        Wgmma64x64Rs<Elem, true>(acc_dk, ds_frag[ks], GmmaDescAdvance(desc_gq_mn, rows), true);   // (14)
        Wgmma64x64Rs<Elem, true>(acc_dk, ds2_frag[ks], GmmaDescAdvance(desc_q_mn, rows), true);   // (14)
      }
      WgmmaCommit();
      WgmmaWait<0>();  // the fragments are rewritten by the next half
    }
  }

  Elem* ddk = bob::HeadBaseOut<Elem>(p.ddk, b, hk);
  Elem* ddv = bob::HeadBaseOut<Elem>(p.ddv, b, hk);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int key = key0 + 8 * half;
    if (key >= T) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int d = 8 * j + 2 * t;
      *reinterpret_cast<uint32_t*>(ddk + int64_t{key} * p.ddk.st + d) =  // (14), times s once
          Mma::Pack(p.scale * acc_dk[4 * j + 2 * half], p.scale * acc_dk[4 * j + 2 * half + 1]);
      *reinterpret_cast<uint32_t*>(ddv + int64_t{key} * p.ddv.st + d) =
          Mma::Pack(acc_dv[4 * j + 2 * half], acc_dv[4 * j + 2 * half + 1]);
    }
  }
}

}  // namespace flashtick::cuda::sm90
