// FillNormal16 (bench_init.h): one thread per pair of elements, grid-stride.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "bench/attention/bench_init.h"

namespace flashtick::bench {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 65535;
constexpr float kTwoPi = 6.283185307179586f;
constexpr float kTwoPow24 = 16777216.0f;  // uniforms from the top 24 bits of a hash

__device__ uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <typename Elem>
__device__ Elem FromFloat(float v);
template <>
__device__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }

template <typename Elem>
__global__ void fill_normal_kernel(Elem* p, int64_t n, uint64_t seed) {
  const int64_t pairs = (n + 1) / 2;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < pairs;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint64_t h = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(i)));
    // u1 in (0, 1] so log(u1) is finite; u2 in [0, 1).
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) / kTwoPow24;
    const float u2 = static_cast<float>((h >> 16) & 0xFFFFFF) / kTwoPow24;
    const float r = sqrtf(-2.0f * logf(u1));
    p[2 * i] = FromFloat<Elem>(r * cosf(kTwoPi * u2));
    if (2 * i + 1 < n) p[2 * i + 1] = FromFloat<Elem>(r * sinf(kTwoPi * u2));
  }
}

}  // namespace

cudaError_t FillNormal16(void* p, int64_t n, bool bf16, uint64_t seed, cudaStream_t stream) {
  const int64_t pairs = (n + 1) / 2;
  const int blocks = static_cast<int>(std::min<int64_t>((pairs + kThreads - 1) / kThreads, kMaxBlocks));
  if (blocks == 0) return cudaSuccess;
  if (bf16)
    fill_normal_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(p), n, seed);
  else
    fill_normal_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(p), n, seed);
  return cudaGetLastError();
}

}  // namespace flashtick::bench
