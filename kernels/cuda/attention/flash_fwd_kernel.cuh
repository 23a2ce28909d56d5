// Flash attention forward (FlashAttention-2, Alg. 1) with mma.sync m16n8k16 and
// cp.async, for sm_80 and later. One CTA owns kBlockM query rows of one (b, h) and
// streams key blocks from the last one visible down to 0 (FA2's order: the masked
// diagonal block first). Each warp owns whole query rows, so the online softmax
// state (m_i, l_i) never leaves the warp. Writes O and L = logsumexp (natural log).
// Legend: Q K V O as in kernels/ops/attention.h; S = Q Kᵀ (unscaled), P = softmax
// numerators, m_i row max of S, l_i row sum of P, scale_log2 = scale · log2 e.
// Pipeline per key block n (FA2): wait K(n) | issue V(n) | S = Q K(n)ᵀ | mask |
// wait V(n) | issue K(n−1) | online softmax | O += P V(n). The loads of V(n) and
// K(n−1) overlap the two GEMMs; K and V have one buffer each.
// Split-KV (p.num_splits > 1, see AttentionFwdParams): CTA z walks only its split's
// key blocks and writes fp32 partials; flash_fwd_combine_kernel merges them.
#pragma once

#include <cmath>

#include "kernels/cuda/attention/flash_params.h"
#include "kernels/cuda/attention/flash_tiles.cuh"

namespace flashtick::cuda::flash {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kNWarps_>
struct FlashFwdTraits {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;  // query rows per CTA
  static constexpr int kBlockN = kBlockN_;  // keys per inner step
  static constexpr int kNWarps = kNWarps_;
  static constexpr int kNThreads = kNWarps * kWarpSize;
  // 2 CTAs per SM: 128 threads × ≤ 255 registers each fit twice in the 64K register file.
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int kWarpRows = kBlockM / kNWarps;  // query rows per warp
  static constexpr int kMT = kWarpRows / 16;           // m16 tiles per warp
  static constexpr int kNTS = kBlockN / 8;             // n8 tiles of S per warp
  static constexpr int kNTO = kHeadDim / 8;            // n8 tiles of O per warp
  static constexpr int kKStepsQK = kHeadDim / 16;
  static constexpr int kKStepsPV = kBlockN / 16;
  using TileQ = SmemTile<kBlockM, kHeadDim>;
  using TileKV = SmemTile<kBlockN, kHeadDim>;
  static constexpr int kElemBytes = 2;
  static constexpr int kSmemBytes = (TileQ::kElems + 2 * TileKV::kElems) * kElemBytes;

  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256,
                "instantiated for D ∈ {64, 128, 256}");
  static_assert(kBlockM % (16 * kNWarps) == 0, "each warp owns whole m16 tiles of rows");
  static_assert(kBlockN % 16 == 0, "P·V steps over keys 16 at a time");
  static_assert(kNTS % 2 == 0 && kNTO % 2 == 0, "B fragments load n8 tiles in pairs");
  static_assert(kSmemBytes <= 99 * 1024, "two CTAs per SM must fit in shared memory");
};

// kSplit: the split-KV variant (p.num_splits > 1); a template flag so the unsplit
// kernel compiles exactly as without it (no extra registers in its main loop).
template <typename Traits, typename Elem, bool kCausal, bool kSplit = false>
__global__ void __launch_bounds__(Traits::kNThreads, Traits::kMinBlocksPerSm)
    flash_fwd_kernel(const AttentionFwdParams p) {
  using TileQ = typename Traits::TileQ;
  using TileKV = typename Traits::TileKV;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN;
  constexpr int kMT = Traits::kMT, kNTS = Traits::kNTS, kNTO = Traits::kNTO;
  constexpr int kNThreads = Traits::kNThreads;

  FLASH_DYNAMIC_SMEM(smem);
  Elem* sQ = reinterpret_cast<Elem*>(smem);
  Elem* sK = sQ + TileQ::kElems;
  Elem* sV = sK + TileKV::kElems;

  const int tid = threadIdx.x, lane = tid % kWarpSize, warp = tid / kWarpSize;
  // Grid (B·H, query blocks), dispatched x fastest: every head's last query block (the
  // most keys under causal masking) starts first, and the short CTAs fill the tail.
  const int m_block = gridDim.y - 1 - blockIdx.y;
  const int h = blockIdx.x % p.H, b = blockIdx.x / p.H, hk = h / p.group;
  const int T = p.T, m0 = m_block * kBlockM, warp_row0 = warp * Traits::kWarpRows;
  const int key_end = kCausal ? min(T, m0 + kBlockM) : T;  // keys past the last row are masked
  const int n_visible = (key_end + kBlockN - 1) / kBlockN;
  constexpr bool split = kSplit;
  const int n_begin = split ? static_cast<int>(blockIdx.z) * p.split_blocks : 0;
  const int n_blocks = split ? min(n_visible, n_begin + p.split_blocks) : n_visible;
  // First row of this (split, b, h) in lse_part / o_part; recomputed where used so it
  // holds no register through the main loop.
  auto part_rows = [&] { return (static_cast<int64_t>(blockIdx.z) * p.B * p.H + b * p.H + h) * T; };
  if (split && n_begin >= n_blocks) {
    // Every key of this split lies past the causal diagonal of these rows: no keys,
    // L_s = −inf, which the combine skips (O_s is never read).
    for (int r = tid; r < kBlockM; r += kNThreads)
      if (m0 + r < T) p.lse_part[part_rows() + m0 + r] = -INFINITY;
    return;  // the whole CTA, before any barrier
  }

  const Elem* gQ = static_cast<const Elem*>(p.q.ptr) + b * p.q.batch_stride +
                   h * p.q.head_stride + static_cast<int64_t>(m0) * p.q.row_stride;
  const Elem* gK = static_cast<const Elem*>(p.k.ptr) + b * p.k.batch_stride + hk * p.k.head_stride;
  const Elem* gV = static_cast<const Elem*>(p.v.ptr) + b * p.v.batch_stride + hk * p.v.head_stride;

  int n = n_blocks - 1;
  CopyTileAsync<TileQ, kNThreads>(sQ, gQ, p.q.row_stride, T - m0, tid);
  CopyTileAsync<TileKV, kNThreads>(sK, gK + static_cast<int64_t>(n) * kBlockN * p.k.row_stride,
                                   p.k.row_stride, T - n * kBlockN, tid);
  CpAsyncCommit();

  float acc_o[kMT][kNTO][4];
  ZeroAcc(acc_o);
  float row_max[kMT][2], row_sum[kMT][2];  // m_i (unscaled S units) and thread-partial l_i
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) row_max[mt][half] = -INFINITY, row_sum[mt][half] = 0.0f;

  for (; n >= n_begin; --n) {
    const int n0 = n * kBlockN;
    CpAsyncWait<0>();
    __syncthreads();  // K(n) (and Q) landed for all; every warp is done reading V(n+1)
    CopyTileAsync<TileKV, kNThreads>(sV, gV + static_cast<int64_t>(n0) * p.v.row_stride,
                                     p.v.row_stride, T - n0, tid);
    CpAsyncCommit();

    // S = Q K(n)ᵀ  [kWarpRows × kBlockN] per warp.
    float acc_s[kMT][kNTS][4];
    ZeroAcc(acc_s);
    WarpGemm<Elem, kMT, kNTS, Traits::kKStepsQK>(
        acc_s,
        [&](uint32_t(&a)[4], int mt, int ks) { LoadA<TileQ>(a, sQ, warp_row0 + mt * 16, ks * 16, lane); },
        [&](uint32_t(&b4)[4], int np, int ks) { LoadBnk<TileKV>(b4, sK, np * 16, ks * 16, lane); });

    // Mask keys past T (ragged last block) and, if causal, keys after the query. Only
    // blocks that cross T or the diagonal pay for the test.
    if (n0 + kBlockN > T || (kCausal && n0 + kBlockN - 1 > m0)) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNTS; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = m0 + warp_row0 + AccRow(mt, e, lane);
            const int col = n0 + AccCol(nt, e, lane);
            if (col >= T || (kCausal && col > row)) acc_s[mt][nt][e] = -INFINITY;
          }
    }

    CpAsyncWait<0>();
    __syncthreads();  // V(n) landed for all; every warp is done reading K(n)
    if (n > n_begin) {
      const int prev0 = n0 - kBlockN;
      CopyTileAsync<TileKV, kNThreads>(sK, gK + static_cast<int64_t>(prev0) * p.k.row_stride,
                                       p.k.row_stride, T - prev0, tid);
      CpAsyncCommit();
    }

    // Online softmax: m_new = max(m, rowmax S); rescale l and O by exp(scale·(m − m_new)).
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float mx = row_max[mt][half];
#pragma unroll
        for (int nt = 0; nt < kNTS; ++nt)
          mx = fmaxf(mx, fmaxf(acc_s[mt][nt][2 * half], acc_s[mt][nt][2 * half + 1]));
        mx = QuadMax(mx);
        // -inf guard: while every key of a row is masked its max stays −inf; subtract 0
        // then, so exp2(−inf − 0) = 0 rather than exp2(−inf + inf) = NaN.
        const float max_scaled = mx == -INFINITY ? 0.0f : mx * p.scale_log2;
        // exp2 with log2(e) folded into scale_log2: one FFMA per element. The first
        // visible block has an old max of −inf, so the rescale is exp2(−inf) = 0.
        const float rescale = FastExp2(row_max[mt][half] * p.scale_log2 - max_scaled);
        row_max[mt][half] = mx;
        row_sum[mt][half] *= rescale;
#pragma unroll
        for (int nt = 0; nt < kNTO; ++nt) {
          acc_o[mt][nt][2 * half] *= rescale;
          acc_o[mt][nt][2 * half + 1] *= rescale;
        }
#pragma unroll
        for (int nt = 0; nt < kNTS; ++nt)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const float pij = FastExp2(acc_s[mt][nt][2 * half + j] * p.scale_log2 - max_scaled);
            acc_s[mt][nt][2 * half + j] = pij;  // masked: exp2(−inf) = 0
            row_sum[mt][half] += pij;
          }
      }

    // O += P V(n). The S accumulator layout is the A fragment layout, so P goes from
    // registers straight into the MMA, rounded to Elem as FA2 does. Packing it first
    // frees the fp32 S registers before the GEMM.
    uint32_t p_frag[kMT][Traits::kKStepsPV][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int ks = 0; ks < Traits::kKStepsPV; ++ks) {
        p_frag[mt][ks][0] = PackFloat2<Elem>(acc_s[mt][2 * ks][0], acc_s[mt][2 * ks][1]);
        p_frag[mt][ks][1] = PackFloat2<Elem>(acc_s[mt][2 * ks][2], acc_s[mt][2 * ks][3]);
        p_frag[mt][ks][2] = PackFloat2<Elem>(acc_s[mt][2 * ks + 1][0], acc_s[mt][2 * ks + 1][1]);
        p_frag[mt][ks][3] = PackFloat2<Elem>(acc_s[mt][2 * ks + 1][2], acc_s[mt][2 * ks + 1][3]);
      }
    WarpGemm<Elem, kMT, kNTO, Traits::kKStepsPV>(
        acc_o,
        [&](uint32_t(&a)[4], int mt, int ks) {
#pragma unroll
          for (int r = 0; r < 4; ++r) a[r] = p_frag[mt][ks][r];
        },
        [&](uint32_t(&b4)[4], int np, int ks) { LoadBkn<TileKV>(b4, sV, np * 16, ks * 16, lane); });
  }

  // Epilogue: O = acc / l; L = scale·m + ln l. Rows ≥ T are padding and not written.
  // Split: the same over this split's keys, O in fp32 to o_part, L to lse_part.
  Elem* gO = static_cast<Elem*>(p.o.ptr) + b * p.o.batch_stride + h * p.o.head_stride;
  float* lse = split ? p.lse_part + part_rows() : p.lse + (static_cast<int64_t>(b) * p.H + h) * T;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float sum = QuadSum(row_sum[mt][half]);  // all lanes take part in the shuffle
      // A row with no visible key (impossible for causal self-attention) is O = 0, L = −inf.
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      const int row = m0 + warp_row0 + AccRow(mt, 2 * half, lane);
      if (row >= T) continue;
      if constexpr (split) {
        float* o_row = p.o_part + (part_rows() + row) * Traits::kHeadDim;
#pragma unroll
        for (int nt = 0; nt < kNTO; ++nt) {
          o_row[AccCol(nt, 0, lane)] = acc_o[mt][nt][2 * half] * inv;
          o_row[AccCol(nt, 0, lane) + 1] = acc_o[mt][nt][2 * half + 1] * inv;
        }
      } else {
        Elem* o_row = gO + static_cast<int64_t>(row) * p.o.row_stride;
#pragma unroll
        for (int nt = 0; nt < kNTO; ++nt)
          *reinterpret_cast<uint32_t*>(o_row + AccCol(nt, 0, lane)) =
              PackFloat2<Elem>(acc_o[mt][nt][2 * half] * inv, acc_o[mt][nt][2 * half + 1] * inv);
      }
      if (lane % 4 == 0)
        lse[row] = sum > 0.0f ? row_max[mt][half] * p.scale + logf(sum) : -INFINITY;
    }
}

// Merges the split-KV partials of one query row per warp (rows in x, 4 warps a CTA):
// L = m + log Σ_s exp(L_s − m) with m = max_s L_s, O = Σ_s exp(L_s − L) · O_s, the
// splits with L_s = −inf (no visible key) skipped. Every row sees key 0 (split 0)
// under causal masking and every key otherwise, so some L_s is finite.
inline constexpr int kCombineWarps = 4;

template <typename Elem, int kHeadDim>
__global__ void __launch_bounds__(kCombineWarps * kWarpSize)
    flash_fwd_combine_kernel(const AttentionFwdParams p) {
  constexpr int kPer = kHeadDim / kWarpSize;  // 2, 4 or 8 consecutive elements per lane
  const int lane = threadIdx.x % kWarpSize;
  const int64_t rows = static_cast<int64_t>(p.B) * p.H * p.T;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kCombineWarps + threadIdx.x / kWarpSize;
  if (row >= rows) return;  // whole warps exit together
  const int t = static_cast<int>(row % p.T), bh = static_cast<int>(row / p.T);
  const int b = bh / p.H, h = bh % p.H;
  float m = -INFINITY;
  for (int s = 0; s < p.num_splits; ++s) m = fmaxf(m, p.lse_part[s * rows + row]);
  float sum = 0.0f;
  for (int s = 0; s < p.num_splits; ++s) {
    const float ls = p.lse_part[s * rows + row];
    if (ls != -INFINITY) sum += expf(ls - m);
  }
  const float lse = m == -INFINITY ? -INFINITY : m + logf(sum);
  float o[kPer] = {};
  for (int s = 0; s < p.num_splits; ++s) {
    const float ls = p.lse_part[s * rows + row];
    if (ls == -INFINITY) continue;
    const float w = expf(ls - lse);
    const float* po = p.o_part + (s * rows + row) * kHeadDim + lane * kPer;
#pragma unroll
    for (int j = 0; j < kPer; ++j) o[j] += w * po[j];
  }
  Elem* out = static_cast<Elem*>(p.o.ptr) + b * p.o.batch_stride + h * p.o.head_stride +
              static_cast<int64_t>(t) * p.o.row_stride + lane * kPer;
#pragma unroll
  for (int j = 0; j < kPer; j += 2)
    *reinterpret_cast<uint32_t*>(out + j) = PackFloat2<Elem>(o[j], o[j + 1]);
  if (lane == 0) p.lse[row] = lse;  // [B, H, T]: row = (b·H + h)·T + t
}

#ifndef FLASHTICK_CUDA_EMULATION
// Enqueues the forward for one traits choice; Elem and causal from the params; with
// num_splits > 1 the split kernel and then the combine.
template <typename Traits>
cudaError_t RunFlashFwd(const AttentionFwdParams& p, cudaStream_t stream) {
  auto launch = [&](auto kernel) {
    constexpr int kSmem = Traits::kSmemBytes;
    if (kSmem > 48 * 1024) {  // above the default limit a kernel must opt in
      const cudaError_t err =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      if (err != cudaSuccess) return err;
    }
    const dim3 grid(p.B * p.H, (p.T + Traits::kBlockM - 1) / Traits::kBlockM,
                    p.num_splits > 1 ? p.num_splits : 1);
    kernel<<<grid, Traits::kNThreads, kSmem, stream>>>(p);
    return cudaGetLastError();
  };
  auto combine = [&](auto kernel) {
    const int64_t rows = static_cast<int64_t>(p.B) * p.H * p.T;
    const dim3 grid(static_cast<unsigned>((rows + kCombineWarps - 1) / kCombineWarps));
    kernel<<<grid, kCombineWarps * kWarpSize, 0, stream>>>(p);
    return cudaGetLastError();
  };
  const bool bf16 = p.dtype == DType::kBF16;
  if (p.num_splits <= 1) {
    if (p.causal)
      return bf16 ? launch(flash_fwd_kernel<Traits, __nv_bfloat16, true>)
                  : launch(flash_fwd_kernel<Traits, __half, true>);
    return bf16 ? launch(flash_fwd_kernel<Traits, __nv_bfloat16, false>)
                : launch(flash_fwd_kernel<Traits, __half, false>);
  }
  cudaError_t err;
  if (p.causal)
    err = bf16 ? launch(flash_fwd_kernel<Traits, __nv_bfloat16, true, true>)
               : launch(flash_fwd_kernel<Traits, __half, true, true>);
  else
    err = bf16 ? launch(flash_fwd_kernel<Traits, __nv_bfloat16, false, true>)
               : launch(flash_fwd_kernel<Traits, __half, false, true>);
  if (err != cudaSuccess) return err;
  return bf16 ? combine(flash_fwd_combine_kernel<__nv_bfloat16, Traits::kHeadDim>)
              : combine(flash_fwd_combine_kernel<__half, Traits::kHeadDim>);
}
#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace flashtick::cuda::flash
