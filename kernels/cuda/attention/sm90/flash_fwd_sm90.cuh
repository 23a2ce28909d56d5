// Flash attention forward for Hopper (sm_90a) with warpgroup MMA (wgmma.cuh): the
// FlashAttention-2 algorithm of flash_fwd_kernel.cuh with its two GEMMs moved from
// mma.sync to wgmma, FlashAttention-3's first step (Shah et al. 2024, §3.1: "WGMMA" before
// warp specialization and the TMA). Each warpgroup owns 64 query rows (one m64 tile);
// the CTA's warpgroups share the key and value tiles. D = 64 or 128.
// A [rows × D] tile is D/64 column blocks ("atoms" of the 128-byte swizzle) of [rows × 64]
// 16-bit values, one 128-byte row each, block a at a·rows·128 bytes.
//   S = Q·K(n)ᵀ: wgmma with A = Q and B = K(n) both from shared memory, K-major, D/16
//     k16 steps along D (four a column block, 32 bytes apart);
//   online softmax on the S accumulator, whose layout is the A-register layout of the next
//     GEMM (wgmma.cuh, "Fragments"), so P is packed to 16 bits in registers;
//   O += P·V(n): wgmma with A = P from registers and B = V(n) MN-major (V rows are
//     D-contiguous, D the N dimension), four k16 steps along the keys, one m64n64 per
//     64-column block of O.
// Tiles are copied with cp.async into the 128-byte-swizzled layout the descriptors
// describe (chunk c of row r at r·128 + (c ^ r % 8)·16), and fenced to the async proxy
// before wgmma reads them. Pipeline per key block, as FA2: wait K(n) | issue V(n) | S |
// mask | wait V(n) | issue K(n−1) | softmax | O += P·V(n). Writes O and L = logsumexp.
// Not yet here: TMA loads, producer/consumer warp specialization, pingpong between
// warpgroups, softmax overlapped with the next GEMM (FA3 §3.1–3.2), split-KV.
#pragma once

#include <cmath>

#include "kernels/cuda/attention/flash_params.h"
#include "kernels/cuda/attention/flash_tiles.cuh"
#include "kernels/cuda/attention/sm90/wgmma.cuh"

namespace flashtick::cuda::sm90 {

using flash::AttentionFwdParams;

// kOverlap_: flash_fwd_sm90_overlap_kernel (below) with K and V double-buffered, rather
// than flash_fwd_sm90_kernel.
template <int kHeadDim_, int kWarpgroups_, bool kOverlap_ = false>
struct FlashFwdSm90Traits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kWarpgroups = kWarpgroups_;
  static constexpr bool kOverlap = kOverlap_;
  static constexpr int kBlockM = 64 * kWarpgroups;  // query rows per CTA, 64 a warpgroup
  static constexpr int kBlockN = 64;                // keys per inner step (wgmma n64)
  static constexpr int kNThreads = kWarpgroupThreads * kWarpgroups;
  static constexpr int kAtoms = kHeadDim / 64;      // 64-column blocks of a tile
  static constexpr int kTileQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kTileKVBytes = kBlockN * kHeadDim * 2;
  // Q, K and V (two buffers each when overlapping), plus the slack that aligns them to
  // the 1,024-byte swizzle atom.
  static constexpr int kSmemBytes = kTileQBytes + (kOverlap ? 4 : 2) * kTileKVBytes + 1024;
  static_assert(kHeadDim == 64 || kHeadDim == 128, "m64n64k16 per 64-column block: D = 64 or 128");
};

// Copies kRows rows of kAtoms·64 16-bit values (row stride `stride` elements) into a
// tile of kAtoms 128-byte-swizzled column blocks; rows ≥ valid_rows are zero-filled.
template <int kRows, int kAtoms, int kThreads, typename Elem>
__device__ __forceinline__ void CopySw128TileAsync(unsigned char* tile, const Elem* g, int64_t stride,
                                                   int valid_rows, int tid) {
#pragma unroll
  for (int i = tid; i < kRows * kAtoms * 8; i += kThreads) {
    const int r = i / (kAtoms * 8), chunk = i % (kAtoms * 8), a = chunk / 8, c = chunk % 8;
    const bool valid = r < valid_rows;
    unsigned char* dst = tile + a * kRows * 128 + Sw128Offset(r, c * 8);
    flash::CpAsync16(dst, valid ? g + r * stride + chunk * 8 : g, valid);
  }
}

// The epilogue of both forwards: O = acc / l and L = scale·m + ln l for this thread's
// rows row0 and row0 + 8 (quad lane t holds columns 8j + 2t, 8j + 2t + 1 of each 64-column
// block); rows ≥ T are padding and not written.
template <int kAtoms, typename Elem>
__device__ __forceinline__ void StoreOutputRows(const AttentionFwdParams& p, int b, int h, int row0, int t,
                                                const float (&acc_o)[kAtoms][32], const float (&row_max)[2],
                                                const float (&row_sum)[2]) {
  Elem* gO = static_cast<Elem*>(p.o.ptr) + b * p.o.batch_stride + h * p.o.head_stride;
  float* lse = p.lse + (static_cast<int64_t>(b) * p.H + h) * p.T;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float sum = flash::QuadSum(row_sum[half]);
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    const int row = row0 + 8 * half;
    if (row >= p.T) continue;
    Elem* o_row = gO + static_cast<int64_t>(row) * p.o.row_stride;
#pragma unroll
    for (int a = 0; a < kAtoms; ++a)
#pragma unroll
      for (int j = 0; j < 8; ++j)
        *reinterpret_cast<uint32_t*>(o_row + 64 * a + 8 * j + 2 * t) = flash::PackFloat2<Elem>(
            acc_o[a][4 * j + 2 * half] * inv, acc_o[a][4 * j + 2 * half + 1] * inv);
    if (t == 0) lse[row] = sum > 0.0f ? row_max[half] * p.scale + logf(sum) : -INFINITY;
  }
}

template <typename Traits, typename Elem, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 1)
    flash_fwd_sm90_kernel(const AttentionFwdParams p) {
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN;
  constexpr int kThreads = Traits::kNThreads, kAtoms = Traits::kAtoms;
  using flash::FastExp2;
  using flash::PackFloat2;
  using flash::QuadMax;

  FLASH_DYNAMIC_SMEM(smem_raw);
  // Align to the swizzle atom, so the swizzle the hardware applies to absolute shared
  // addresses equals the tile-relative one the copies use.
  unsigned char* smem = smem_raw + ((1024 - SmemAddress(smem_raw) % 1024) % 1024);
  unsigned char* sQ = smem;
  unsigned char* sK = sQ + Traits::kTileQBytes;
  unsigned char* sV = sK + Traits::kTileKVBytes;

  const int tid = threadIdx.x, wg = tid / kWarpgroupThreads;
  const int lane = tid % 32, warp = (tid % kWarpgroupThreads) / 32, g = lane / 4, t = lane % 4;
  // Grid (B·H, query blocks), the last query block (the most keys under causal masking)
  // first, as the FA2 kernel.
  const int m_block = gridDim.y - 1 - blockIdx.y;
  const int h = blockIdx.x % p.H, b = blockIdx.x / p.H, hk = h / p.group;
  const int T = p.T, m0 = m_block * kBlockM;
  const int row0 = m0 + wg * 64 + warp * 16 + g;  // this thread's rows: row0 and row0 + 8
  const int key_end = kCausal ? min(T, m0 + kBlockM) : T;
  const int n_blocks = (key_end + kBlockN - 1) / kBlockN;

  const Elem* gQ = static_cast<const Elem*>(p.q.ptr) + b * p.q.batch_stride +
                   h * p.q.head_stride + static_cast<int64_t>(m0) * p.q.row_stride;
  const Elem* gK = static_cast<const Elem*>(p.k.ptr) + b * p.k.batch_stride + hk * p.k.head_stride;
  const Elem* gV = static_cast<const Elem*>(p.v.ptr) + b * p.v.batch_stride + hk * p.v.head_stride;

  int n = n_blocks - 1;
  CopySw128TileAsync<kBlockM, kAtoms, kThreads>(sQ, gQ, p.q.row_stride, T - m0, tid);
  CopySw128TileAsync<kBlockN, kAtoms, kThreads>(
      sK, gK + static_cast<int64_t>(n) * kBlockN * p.k.row_stride, p.k.row_stride, T - n * kBlockN, tid);
  flash::CpAsyncCommit();

  // Descriptors: Q (this warpgroup's 64 rows) and K K-major, V MN-major; 128-byte swizzle,
  // 8-row groups 1,024 bytes apart (SBO). A k16 step is 32 bytes along a row of Q and K
  // (the next column block after four), 16 rows (2,048 bytes) down V.
  const uint64_t desc_q = GmmaDesc(SmemAddress(sQ + wg * 64 * 128), SmemSwizzle::k128B, 16, 1024);
  const uint64_t desc_k = GmmaDesc(SmemAddress(sK), SmemSwizzle::k128B, 16, 1024);
  const uint64_t desc_v = GmmaDesc(SmemAddress(sV), SmemSwizzle::k128B, 8192, 1024);

  float acc_o[kAtoms][32];  // O's 64-column block a
#pragma unroll
  for (int a = 0; a < kAtoms; ++a)
#pragma unroll
    for (int i = 0; i < 32; ++i) acc_o[a][i] = 0.0f;
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};

  for (; n >= 0; --n) {
    const int n0 = n * kBlockN;
    flash::CpAsyncWait<0>();
    FenceProxyAsync();
    __syncthreads();  // K(n) (and Q) landed for all; every warpgroup is done with V(n+1)
    CopySw128TileAsync<kBlockN, kAtoms, kThreads>(sV, gV + static_cast<int64_t>(n0) * p.v.row_stride,
                                                  p.v.row_stride, T - n0, tid);
    flash::CpAsyncCommit();

    // S = Q·K(n)ᵀ, 64 × 64 per warpgroup.
    float acc_s[32];
    WgmmaFence();
#pragma unroll
    for (int ks = 0; ks < Traits::kHeadDim / 16; ++ks)
      Wgmma64x64Ss<Elem, false>(acc_s, GmmaDescAdvance(desc_q, (ks / 4) * kBlockM * 128 + (ks % 4) * 32),
                                GmmaDescAdvance(desc_k, (ks / 4) * kBlockN * 128 + (ks % 4) * 32), ks > 0);
    WgmmaCommit();
    WgmmaWait<0>();

    // Keys past T (ragged last block) and, if causal, after the query.
    if (n0 + kBlockN > T || (kCausal && n0 + kBlockN - 1 > m0 + wg * 64)) {
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int row = row0 + 8 * (v / 2), col = n0 + 8 * j + 2 * t + v % 2;
          if (col >= T || (kCausal && col > row)) acc_s[4 * j + v] = -INFINITY;
        }
    }

    flash::CpAsyncWait<0>();
    FenceProxyAsync();
    __syncthreads();  // V(n) landed for all; every warpgroup is done with K(n)
    if (n > 0) {
      const int prev0 = n0 - kBlockN;
      CopySw128TileAsync<kBlockN, kAtoms, kThreads>(
          sK, gK + static_cast<int64_t>(prev0) * p.k.row_stride, p.k.row_stride, T - prev0, tid);
      flash::CpAsyncCommit();
    }

    // Online softmax (flash_fwd_kernel.cuh): rows row0 (half 0) and row0 + 8 (half 1),
    // 16 values each in this thread, the rest of the row in the quad's other lanes.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float mx = row_max[half];
#pragma unroll
      for (int j = 0; j < 8; ++j) mx = fmaxf(mx, fmaxf(acc_s[4 * j + 2 * half], acc_s[4 * j + 2 * half + 1]));
      mx = QuadMax(mx);
      const float max_scaled = mx == -INFINITY ? 0.0f : mx * p.scale_log2;  // -inf guard
      const float rescale = FastExp2(row_max[half] * p.scale_log2 - max_scaled);
      row_max[half] = mx;
      row_sum[half] *= rescale;
#pragma unroll
      for (int a = 0; a < kAtoms; ++a)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          acc_o[a][4 * j + 2 * half] *= rescale;
          acc_o[a][4 * j + 2 * half + 1] *= rescale;
        }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pij = FastExp2(acc_s[4 * j + 2 * half + e] * p.scale_log2 - max_scaled);
          acc_s[4 * j + 2 * half + e] = pij;
          row_sum[half] += pij;
        }
      }
    }

    // O += P·V(n): P's k16 step ks is S columns 16ks..16ks+15, the n8 blocks 2ks and 2ks+1.
    uint32_t p_frag[4][4];
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      p_frag[ks][0] = PackFloat2<Elem>(acc_s[8 * ks + 0], acc_s[8 * ks + 1]);
      p_frag[ks][1] = PackFloat2<Elem>(acc_s[8 * ks + 2], acc_s[8 * ks + 3]);
      p_frag[ks][2] = PackFloat2<Elem>(acc_s[8 * ks + 4], acc_s[8 * ks + 5]);
      p_frag[ks][3] = PackFloat2<Elem>(acc_s[8 * ks + 6], acc_s[8 * ks + 7]);
    }
    WgmmaFence();  // P and the rescaled O were written by ordinary instructions
#pragma unroll
    for (int a = 0; a < kAtoms; ++a)
#pragma unroll
      for (int ks = 0; ks < kBlockN / 16; ++ks)
        Wgmma64x64Rs<Elem, true>(acc_o[a], p_frag[ks],
                                 GmmaDescAdvance(desc_v, a * kBlockN * 128 + 2048 * ks), true);
    WgmmaCommit();
    WgmmaWait<0>();
  }

  StoreOutputRows<kAtoms, Elem>(p, b, h, row0, t, acc_o, row_max, row_sum);
}

// The forward with the softmax overlapped with the previous block's P·V (FlashAttention-3,
// Shah et al. 2024, §3.2 "intra-warpgroup overlapping"), on the same tiles and contract as
// flash_fwd_sm90_kernel. Per key block n, walked last to first:
//   issue S(n) = Q·K(n)ᵀ and O += P(n+1)·V(n+1), two commit groups;
//   wait for S(n) only, and mask it, take the row max and exponentiate while P·V runs;
//   wait for P·V, then rescale O and the row sums and pack P(n) for the next block.
// K and V are double-buffered: block n's prologue prefetches K(n−1) and V(n), which land
// under that work (the plain kernel's single buffers would expose those loads here,
// since P·V(n) is issued a block later). Smem: 49 KB at d = 64, 97 KB at d = 128.
template <typename Traits, typename Elem, bool kCausal>
__global__ void __launch_bounds__(Traits::kNThreads, 1)
    flash_fwd_sm90_overlap_kernel(const AttentionFwdParams p) {
  static_assert(Traits::kOverlap, "double-buffered traits");
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN;
  constexpr int kThreads = Traits::kNThreads, kAtoms = Traits::kAtoms;
  using flash::FastExp2;
  using flash::PackFloat2;
  using flash::QuadMax;

  FLASH_DYNAMIC_SMEM(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - SmemAddress(smem_raw) % 1024) % 1024);
  unsigned char* sQ = smem;
  unsigned char* sK = sQ + Traits::kTileQBytes;    // buffer x at sK + x·kTileKVBytes
  unsigned char* sV = sK + 2 * Traits::kTileKVBytes;

  const int tid = threadIdx.x, wg = tid / kWarpgroupThreads;
  const int lane = tid % 32, warp = (tid % kWarpgroupThreads) / 32, g = lane / 4, t = lane % 4;
  const int m_block = gridDim.y - 1 - blockIdx.y;
  const int h = blockIdx.x % p.H, b = blockIdx.x / p.H, hk = h / p.group;
  const int T = p.T, m0 = m_block * kBlockM;
  const int row0 = m0 + wg * 64 + warp * 16 + g;
  const int key_end = kCausal ? min(T, m0 + kBlockM) : T;
  const int n_blocks = (key_end + kBlockN - 1) / kBlockN;

  const Elem* gQ = static_cast<const Elem*>(p.q.ptr) + b * p.q.batch_stride +
                   h * p.q.head_stride + static_cast<int64_t>(m0) * p.q.row_stride;
  const Elem* gK = static_cast<const Elem*>(p.k.ptr) + b * p.k.batch_stride + hk * p.k.head_stride;
  const Elem* gV = static_cast<const Elem*>(p.v.ptr) + b * p.v.batch_stride + hk * p.v.head_stride;
  auto load_k = [&](int n) {
    CopySw128TileAsync<kBlockN, kAtoms, kThreads>(sK + (n & 1) * Traits::kTileKVBytes,
                                                  gK + static_cast<int64_t>(n) * kBlockN * p.k.row_stride,
                                                  p.k.row_stride, T - n * kBlockN, tid);
  };
  auto load_v = [&](int n) {
    CopySw128TileAsync<kBlockN, kAtoms, kThreads>(sV + (n & 1) * Traits::kTileKVBytes,
                                                  gV + static_cast<int64_t>(n) * kBlockN * p.v.row_stride,
                                                  p.v.row_stride, T - n * kBlockN, tid);
  };
  CopySw128TileAsync<kBlockM, kAtoms, kThreads>(sQ, gQ, p.q.row_stride, T - m0, tid);
  load_k(n_blocks - 1);
  flash::CpAsyncCommit();

  const uint64_t desc_q = GmmaDesc(SmemAddress(sQ + wg * 64 * 128), SmemSwizzle::k128B, 16, 1024);
  float acc_o[kAtoms][32];
#pragma unroll
  for (int a = 0; a < kAtoms; ++a)
#pragma unroll
    for (int i = 0; i < 32; ++i) acc_o[a][i] = 0.0f;
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};
  uint32_t p_frag[4][4];  // P of the block before, the A operand of its P·V

  // O += P·V(n) from the buffer of V(n), issued (not committed) by the caller.
  auto issue_pv = [&](int n) {
    const uint64_t desc_v =
        GmmaDesc(SmemAddress(sV + (n & 1) * Traits::kTileKVBytes), SmemSwizzle::k128B, 8192, 1024);
#pragma unroll
    for (int a = 0; a < kAtoms; ++a)
#pragma unroll
      for (int ks = 0; ks < kBlockN / 16; ++ks)
        Wgmma64x64Rs<Elem, true>(acc_o[a], p_frag[ks], GmmaDescAdvance(desc_v, a * kBlockN * 128 + 2048 * ks),
                                 true);
  };

  for (int n = n_blocks - 1; n >= 0; --n) {
    const int n0 = n * kBlockN;
    const bool pv = n + 1 < n_blocks;  // a previous block's P·V to run under this softmax
    flash::CpAsyncWait<0>();
    FenceProxyAsync();
    __syncthreads();  // K(n) and V(n+1) landed; every warpgroup is done with K(n+1), V(n+2)
    if (n > 0) load_k(n - 1);
    load_v(n);
    flash::CpAsyncCommit();

    const uint64_t desc_k =
        GmmaDesc(SmemAddress(sK + (n & 1) * Traits::kTileKVBytes), SmemSwizzle::k128B, 16, 1024);
    float acc_s[32];
    WgmmaFence();  // p_frag and the rescaled O were written by ordinary instructions
#pragma unroll
    for (int ks = 0; ks < Traits::kHeadDim / 16; ++ks)
      Wgmma64x64Ss<Elem, false>(acc_s, GmmaDescAdvance(desc_q, (ks / 4) * kBlockM * 128 + (ks % 4) * 32),
                                GmmaDescAdvance(desc_k, (ks / 4) * kBlockN * 128 + (ks % 4) * 32), ks > 0);
    WgmmaCommit();
    if (pv) {
      issue_pv(n + 1);
      WgmmaCommit();
      WgmmaWait<1>();  // S(n) is done; P·V(n+1) may still run
    } else {
      WgmmaWait<0>();
    }

    if (n0 + kBlockN > T || (kCausal && n0 + kBlockN - 1 > m0 + wg * 64)) {
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int row = row0 + 8 * (v / 2), col = n0 + 8 * j + 2 * t + v % 2;
          if (col >= T || (kCausal && col > row)) acc_s[4 * j + v] = -INFINITY;
        }
    }
    // Online softmax, its O-independent part: the new row max, P(n) and its row sums.
    float rescale[2], block_sum[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float mx = row_max[half];
#pragma unroll
      for (int j = 0; j < 8; ++j) mx = fmaxf(mx, fmaxf(acc_s[4 * j + 2 * half], acc_s[4 * j + 2 * half + 1]));
      mx = QuadMax(mx);
      const float max_scaled = mx == -INFINITY ? 0.0f : mx * p.scale_log2;  // -inf guard
      rescale[half] = FastExp2(row_max[half] * p.scale_log2 - max_scaled);
      row_max[half] = mx;
      block_sum[half] = 0.0f;
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pij = FastExp2(acc_s[4 * j + 2 * half + e] * p.scale_log2 - max_scaled);
          acc_s[4 * j + 2 * half + e] = pij;
          block_sum[half] += pij;
        }
    }
    if (pv) WgmmaWait<0>();  // P·V(n+1) is done: O and p_frag may be written
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      row_sum[half] = row_sum[half] * rescale[half] + block_sum[half];
#pragma unroll
      for (int a = 0; a < kAtoms; ++a)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          acc_o[a][4 * j + 2 * half] *= rescale[half];
          acc_o[a][4 * j + 2 * half + 1] *= rescale[half];
        }
    }
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      p_frag[ks][0] = PackFloat2<Elem>(acc_s[8 * ks + 0], acc_s[8 * ks + 1]);
      p_frag[ks][1] = PackFloat2<Elem>(acc_s[8 * ks + 2], acc_s[8 * ks + 3]);
      p_frag[ks][2] = PackFloat2<Elem>(acc_s[8 * ks + 4], acc_s[8 * ks + 5]);
      p_frag[ks][3] = PackFloat2<Elem>(acc_s[8 * ks + 6], acc_s[8 * ks + 7]);
    }
  }
  // The first block's P·V, once V(0) has landed.
  flash::CpAsyncWait<0>();
  FenceProxyAsync();
  __syncthreads();
  WgmmaFence();
  issue_pv(0);
  WgmmaCommit();
  WgmmaWait<0>();

  StoreOutputRows<kAtoms, Elem>(p, b, h, row0, t, acc_o, row_max, row_sum);
}

}  // namespace flashtick::cuda::sm90
