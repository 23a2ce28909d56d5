// Flash-decoding for serving (Op::kAttentionDecode): one new query row per (b, h)
// against a K/V cache of Tk rows, all visible. The cache is split into chunks of
// kDecodeChunk keys so a long day keeps every SM busy even at B·H = 12:
//   1. flash_decode_split_kernel, one CTA per (chunk, h, b): each warp streams its keys
//      with an online softmax (lane ℓ owns kPer adjacent elements of q and of the
//      unnormalised output, DecodeLanes), the CTA merges its warps, and writes the chunk's partial
//      (m_c, l_c, o_c) in fp32;
//   2. flash_decode_combine_kernel, one warp per (b, h):
//      m = max_c m_c;  o = Σ_c e^{m_c − m} o_c / Σ_c e^{m_c − m} l_c.
// With kv_len, only the first kv_len[b] rows are keys: the grid still covers Tk (the
// cache's capacity, fixed from one step to the next so a captured step replays), and a
// chunk past the keys writes the empty partial (m = −inf, l = 0), weight 0 in the merge.
// Decode reads each K/V row once per head and does 4·D FLOPs per key, so it is bound by
// memory bandwidth; plain FMAs and shuffles, no tensor cores. Scores are in the exp2
// domain: s' = scale_log2 · q·k, so e^{scale·(s − m)} = exp2(s' − m').
#pragma once

#include <cmath>

#include "kernels/cuda/attention/flash_mma.cuh"
#include "kernels/cuda/attention/flash_params.h"

namespace flashtick::cuda::flash {

// Keys per split: ~92 splits per head at Tk = 23,400, so B·H = 12 still fills the GPU.
inline constexpr int kDecodeChunk = kFlashDecodeChunk;
inline constexpr int kDecodeWarps = 4;     // warps per split CTA, each taking every 4th key

// How a warp holds a row of D elements: lanes 0..kLanes−1 own kPer adjacent elements
// each, kPer even (16-bit pairs) and ≥ D/32; the other lanes hold zeros, which add
// nothing to q·k. D = 16: 8 lanes of 2; 32: 16 of 2; 64: 32 of 2; 96: 24 of 4; 128: 32 of 4.
template <int kHeadDim>
struct DecodeLanes {
  static constexpr int kPer = ((kHeadDim + kWarpSize - 1) / kWarpSize + 1) / 2 * 2;
  static constexpr int kLanes = kHeadDim / kPer;
  static_assert(kHeadDim % kPer == 0 && kLanes <= kWarpSize, "a row fits one warp in pairs");
};

template <int kHeadDim>
constexpr int DecodeSmemBytes() {
  return static_cast<int>(sizeof(float)) * kDecodeWarps * (2 + kHeadDim);
}

// The lane's kPer elements of a row; zeros on lanes past kLanes, which re-read the
// last lane's elements (in bounds, no branch around the load) and drop them.
template <typename Elem, int kHeadDim>
__device__ __forceinline__ void LoadRowSlice(const Elem* row, int lane,
                                             float (&x)[DecodeLanes<kHeadDim>::kPer]) {
  constexpr int kPer = DecodeLanes<kHeadDim>::kPer, kLanes = DecodeLanes<kHeadDim>::kLanes;
  const float keep = lane < kLanes ? 1.0f : 0.0f;
  const Elem* mine = row + min(lane, kLanes - 1) * kPer;
#pragma unroll
  for (int j = 0; j < kPer; j += 2) {
    const float2 v = UnpackFloat2<Elem>(*reinterpret_cast<const uint32_t*>(mine + j));
    x[j] = keep * v.x;
    x[j + 1] = keep * v.y;
  }
}

template <typename Elem, int kHeadDim>
__global__ void __launch_bounds__(kDecodeWarps * kWarpSize)
    flash_decode_split_kernel(const AttentionDecodeParams p) {
  constexpr int kPer = DecodeLanes<kHeadDim>::kPer;
  const bool active = threadIdx.x % kWarpSize < DecodeLanes<kHeadDim>::kLanes;
  // Per-warp partials for the CTA merge: m and l of each warp, then its o (dynamic
  // shared memory of DecodeSmemBytes<kHeadDim>()).
  FLASH_DYNAMIC_SMEM(smem);
  float* s_m = reinterpret_cast<float*>(smem);
  float* s_l = s_m + kDecodeWarps;
  float(*s_o)[kHeadDim] = reinterpret_cast<float(*)[kHeadDim]>(s_l + kDecodeWarps);
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int chunk = blockIdx.x, h = blockIdx.y, b = blockIdx.z, hk = h / p.group;
  const int keys = p.kv_len != nullptr ? min(max(p.kv_len[b], 1), p.Tk) : p.Tk;
  const int j0 = chunk * kDecodeChunk, j1 = min(keys, j0 + kDecodeChunk);

  float q[kPer], acc[kPer];
  LoadRowSlice<Elem, kHeadDim>(static_cast<const Elem*>(p.q.ptr) + b * p.q.batch_stride + h * p.q.head_stride,
                               lane, q);
#pragma unroll
  for (int j = 0; j < kPer; ++j) q[j] *= p.scale_log2, acc[j] = 0.0f;  // scale folded into q once
  float m = -INFINITY, l = 0.0f;
  const Elem* gk = static_cast<const Elem*>(p.k.ptr) + b * p.k.batch_stride + hk * p.k.head_stride;
  const Elem* gv = static_cast<const Elem*>(p.v.ptr) + b * p.v.batch_stride + hk * p.v.head_stride;
  for (int key = j0 + warp; key < j1; key += kDecodeWarps) {
    float kx[kPer], vx[kPer];
    LoadRowSlice<Elem, kHeadDim>(gk + static_cast<int64_t>(key) * p.k.row_stride, lane, kx);
    LoadRowSlice<Elem, kHeadDim>(gv + static_cast<int64_t>(key) * p.v.row_stride, lane, vx);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < kPer; ++j) s += q[j] * kx[j];
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    const float m_new = fmaxf(m, s);           // s is finite: every cached key is visible
    const float rescale = FastExp2(m - m_new);  // exp2(−inf) = 0 on the warp's first key
    const float pj = FastExp2(s - m_new);
    l = l * rescale + pj;
#pragma unroll
    for (int j = 0; j < kPer; ++j) acc[j] = acc[j] * rescale + pj * vx[j];
    m = m_new;
  }
  if (lane == 0) s_m[warp] = m, s_l[warp] = l;
  if (active)
#pragma unroll
    for (int j = 0; j < kPer; ++j) s_o[warp][lane * kPer + j] = acc[j];
  __syncthreads();
  if (warp != 0 || !active) return;  // lane 0 is always active
  // Merge the warps (a warp with no key has m = −inf and contributes weight 0).
  float mc = -INFINITY;
#pragma unroll
  for (int w = 0; w < kDecodeWarps; ++w) mc = fmaxf(mc, s_m[w]);
  float lc = 0.0f, oc[kPer] = {};
#pragma unroll
  for (int w = 0; w < kDecodeWarps; ++w) {
    const float wgt = s_m[w] == -INFINITY ? 0.0f : FastExp2(s_m[w] - mc);  // -inf guard
    lc += wgt * s_l[w];
#pragma unroll
    for (int j = 0; j < kPer; ++j) oc[j] += wgt * s_o[w][lane * kPer + j];
  }
  const int64_t part = (static_cast<int64_t>(b) * p.H + h) * p.n_chunks + chunk;
  if (lane == 0) p.part_m[part] = mc, p.part_l[part] = lc;
#pragma unroll
  for (int j = 0; j < kPer; ++j) p.part_o[part * kHeadDim + lane * kPer + j] = oc[j];
}

template <typename Elem, int kHeadDim>
__global__ void __launch_bounds__(kDecodeWarps * kWarpSize)
    flash_decode_combine_kernel(const AttentionDecodeParams p) {
  constexpr int kPer = DecodeLanes<kHeadDim>::kPer;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t bh = static_cast<int64_t>(blockIdx.x) * kDecodeWarps + threadIdx.x / kWarpSize;
  if (bh >= static_cast<int64_t>(p.B) * p.H) return;  // whole warps exit together
  if (lane >= DecodeLanes<kHeadDim>::kLanes) return;  // no shuffles below: lanes may leave
  const int b = static_cast<int>(bh / p.H), h = static_cast<int>(bh % p.H);
  const float* pm = p.part_m + bh * p.n_chunks;
  const float* pl = p.part_l + bh * p.n_chunks;
  float m = -INFINITY;
  for (int c = 0; c < p.n_chunks; ++c) m = fmaxf(m, pm[c]);
  float l = 0.0f, o[kPer] = {};
  for (int c = 0; c < p.n_chunks; ++c) {
    if (pm[c] == -INFINITY) continue;  // a chunk past kv_len: no keys
    const float wgt = FastExp2(pm[c] - m);
    l += wgt * pl[c];
    const float* po = p.part_o + (bh * p.n_chunks + c) * kHeadDim + lane * kPer;
#pragma unroll
    for (int j = 0; j < kPer; ++j) o[j] += wgt * po[j];
  }
  const float inv = 1.0f / l;  // l ≥ 1: the maximal key (chunk 0 always has one) gives exp2(0)
  Elem* out = static_cast<Elem*>(p.o.ptr) + b * p.o.batch_stride + h * p.o.head_stride + lane * kPer;
#pragma unroll
  for (int j = 0; j < kPer; j += 2)
    *reinterpret_cast<uint32_t*>(out + j) = PackFloat2<Elem>(o[j] * inv, o[j + 1] * inv);
}

#ifndef FLASHTICK_CUDA_EMULATION
template <int kHeadDim>
cudaError_t RunFlashDecode(const AttentionDecodeParams& p, cudaStream_t stream) {
  const dim3 split_grid(p.n_chunks, p.H, p.B);
  const dim3 combine_grid(static_cast<unsigned>((int64_t{p.B} * p.H + kDecodeWarps - 1) / kDecodeWarps));
  const int threads = kDecodeWarps * kWarpSize;
  constexpr int kSmem = DecodeSmemBytes<kHeadDim>();
  if (p.dtype == DType::kBF16) {
    flash_decode_split_kernel<__nv_bfloat16, kHeadDim><<<split_grid, threads, kSmem, stream>>>(p);
    flash_decode_combine_kernel<__nv_bfloat16, kHeadDim><<<combine_grid, threads, 0, stream>>>(p);
  } else {
    flash_decode_split_kernel<__half, kHeadDim><<<split_grid, threads, kSmem, stream>>>(p);
    flash_decode_combine_kernel<__half, kHeadDim><<<combine_grid, threads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}
#endif  // FLASHTICK_CUDA_EMULATION

}  // namespace flashtick::cuda::flash
