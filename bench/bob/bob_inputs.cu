// Seeded inputs and forward statistics for the bob benchmark (see bob_inputs.h).
// The forward is deliberately plain (one warp per query row, 32 keys per step, online
// softmax in fp32): it runs once per N to build valid O, L, D, never in a timed region.
#include <cuda_bf16.h>

#include <cmath>

#include "bench/bob/bob_inputs.h"

namespace flashtick::bench {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;  // one warp per query row

__device__ inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_normal_bf16_kernel(__nv_bfloat16* x, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = SplitMix64(seed * 0x632be59bd9b4e019ull + static_cast<uint64_t>(i));
    // Box-Muller on two 24-bit uniforms in (0, 1].
    const float u1 = (static_cast<float>(r >> 40) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((r >> 16) & 0xffffff) * (1.0f / 16777216.0f);
    x[i] = __float2bfloat16_rn(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

template <int D>
__global__ void forward_stats_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                     const __nv_bfloat16* v, const __nv_bfloat16* dout,
                                     __nv_bfloat16* o, float* lse, float* dvec, int B, int T, int H,
                                     int Hkv, bool causal, float scale) {
  constexpr int kDimsPerLane = D / kWarp;
  const int lane = threadIdx.x % kWarp;
  const int64_t row = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / kWarp;
  if (row >= static_cast<int64_t>(B) * H * T) return;
  const int i = static_cast<int>(row % T), h = static_cast<int>((row / T) % H);
  const int b = static_cast<int>(row / (static_cast<int64_t>(T) * H));
  const int hk = h / (H / Hkv);
  const int64_t qrow = ((static_cast<int64_t>(b) * T + i) * H + h) * D;
  float qv[D];
#pragma unroll
  for (int d = 0; d < D; ++d) qv[d] = __bfloat162float(q[qrow + d]) * scale;
  float m = -INFINITY, l = 0.0f, acc[kDimsPerLane] = {};
  const int key_end = causal ? i + 1 : T;
  for (int j0 = 0; j0 < key_end; j0 += kWarp) {
    const int j = j0 + lane;
    float s = -INFINITY;  // keys past key_end take no weight
    if (j < key_end) {
      const __nv_bfloat16* kr = k + ((static_cast<int64_t>(b) * T + j) * Hkv + hk) * D;
      s = 0.0f;
#pragma unroll
      for (int d = 0; d < D; ++d) s += qv[d] * __bfloat162float(kr[d]);
    }
    float cmax = s;
    for (int off = kWarp / 2; off > 0; off /= 2)
      cmax = fmaxf(cmax, __shfl_xor_sync(~0u, cmax, off));
    const float m_new = fmaxf(m, cmax);  // finite: key j0 ≤ i is always visible
    const float corr = expf(m - m_new);  // m = -inf on the first step: corr = 0
    const float p = expf(s - m_new);
    float psum = p;
    for (int off = kWarp / 2; off > 0; off /= 2) psum += __shfl_xor_sync(~0u, psum, off);
    l = l * corr + psum;
#pragma unroll
    for (int x = 0; x < kDimsPerLane; ++x) acc[x] *= corr;
    const int n_here = min(kWarp, key_end - j0);
    for (int jj = 0; jj < n_here; ++jj) {
      const float pj = __shfl_sync(~0u, p, jj);
      const __nv_bfloat16* vr = v + ((static_cast<int64_t>(b) * T + j0 + jj) * Hkv + hk) * D;
#pragma unroll
      for (int x = 0; x < kDimsPerLane; ++x)
        acc[x] += pj * __bfloat162float(vr[lane * kDimsPerLane + x]);
    }
    m = m_new;
  }
  float dsum = 0.0f;
#pragma unroll
  for (int x = 0; x < kDimsPerLane; ++x) {
    const int d = lane * kDimsPerLane + x;
    const __nv_bfloat16 ob = __float2bfloat16_rn(acc[x] / l);
    o[qrow + d] = ob;
    dsum += __bfloat162float(ob) * __bfloat162float(dout[qrow + d]);
  }
  for (int off = kWarp / 2; off > 0; off /= 2) dsum += __shfl_xor_sync(~0u, dsum, off);
  if (lane == 0) {
    const int64_t st = (static_cast<int64_t>(b) * H + h) * T + i;
    lse[st] = m + logf(l);
    dvec[st] = dsum;
  }
}

}  // namespace

cudaError_t FillNormalBf16(void* x, int64_t n, uint64_t seed, cudaStream_t stream) {
  constexpr int kThreads = 256, kMaxBlocks = 4096;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  fill_normal_bf16_kernel<<<static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads,
                            0, stream>>>(static_cast<__nv_bfloat16*>(x), n, seed);
  return cudaGetLastError();
}

cudaError_t ForwardStatsBf16(const void* q, const void* k, const void* v, const void* dout, void* o,
                             float* lse, float* dvec, int B, int T, int H, int Hkv, int D,
                             bool causal, float scale, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(B) * H * T;
  const dim3 grid(static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock));
  auto* qq = static_cast<const __nv_bfloat16*>(q);
  auto* kk = static_cast<const __nv_bfloat16*>(k);
  auto* vv = static_cast<const __nv_bfloat16*>(v);
  auto* dd = static_cast<const __nv_bfloat16*>(dout);
  auto* oo = static_cast<__nv_bfloat16*>(o);
  if (D == 64) {
    forward_stats_kernel<64><<<grid, kRowsPerBlock * kWarp, 0, stream>>>(
        qq, kk, vv, dd, oo, lse, dvec, B, T, H, Hkv, causal, scale);
  } else if (D == 128) {
    forward_stats_kernel<128><<<grid, kRowsPerBlock * kWarp, 0, stream>>>(
        qq, kk, vv, dd, oo, lse, dvec, B, T, H, Hkv, causal, scale);
  } else if (D == 256) {  // qv[256] spills to local memory: untimed, built once per N
    forward_stats_kernel<256><<<grid, kRowsPerBlock * kWarp, 0, stream>>>(
        qq, kk, vv, dd, oo, lse, dvec, B, T, H, Hkv, causal, scale);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace flashtick::bench
