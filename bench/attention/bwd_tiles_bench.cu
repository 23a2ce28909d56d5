// Tile experiment for the d = 64 Flash backward: times the production traits
// (flash_variants.cuh) beside candidate tilings in one binary, on the same inputs, and
// checks each candidate's dQ, dK, dV against the production kernel's (relative L2), so
// a faster tiling is known to compute the same thing before it replaces the choice.
// Why: Nsight Compute (bench/results/h200-2026-11-29-verify) shows the production
// kernel at 255 registers, one 256-thread CTA per SM, 0.47 eligible warps per
// scheduler: latency-bound. The candidates trade tile size for warps in flight.
// Shapes: B = 1, H = 12, d = 64, causal, bf16. Output: one JSON line per (variant, N)
// with fwd ms, bwd ms, fwd+bwd TFLOP/s (3.5 × the forward's 4·B·H·N²·d/2 flops).
// Usage: bwd_tiles_bench [--n 8192,23400] [--reps 10]
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/attention/bench_init.h"
#include "kernels/cuda/attention/flash_variants.cuh"

namespace flashtick::bench {
namespace {

using cuda::flash::AttentionBwdParams;
using cuda::flash::AttentionFwdParams;
using cuda::flash::BthdArg;
using cuda::flash::FlashBwdTraits;

#define CHECK_CUDA(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

// Candidates: <D, BlockM, BlockN, warps, S/dP warp rows, dK/dV warp rows, dQ warp rows,
// min CTAs per SM>.
using Prod = cuda::flash::BwdTraitsD64;                            // 128×128, 8 warps, 1 CTA/SM
using M64x2 = FlashBwdTraits<64, 64, 128, 8, 2, 4, 2, 2>;         // 97 KB smem, ≤128 regs, 2 CTAs/SM
using M64x1 = FlashBwdTraits<64, 64, 128, 8, 2, 4, 2, 1>;         // same tiles, registers free
using M64N64x3 = FlashBwdTraits<64, 64, 64, 4, 2, 2, 2, 3>;       // 65 KB, 4 warps, 3 CTAs/SM

struct Buffers {
  void *q, *k, *v, *o, *dout, *dq, *dk, *dv;
  float *lse, *dvec, *dq_accum;
};

BthdArg Arg(void* p, int T, int H) {
  BthdArg a;
  a.ptr = p;
  a.head_stride = 64;
  a.row_stride = int64_t{H} * 64;
  a.batch_stride = int64_t{T} * H * 64;
  return a;
}

AttentionBwdParams BwdParams(const Buffers& b, int T, int H) {
  AttentionBwdParams p;
  p.q = Arg(b.q, T, H), p.k = Arg(b.k, T, H), p.v = Arg(b.v, T, H), p.o = Arg(b.o, T, H);
  p.dout = Arg(b.dout, T, H), p.dq = Arg(b.dq, T, H), p.dk = Arg(b.dk, T, H), p.dv = Arg(b.dv, T, H);
  p.lse = b.lse, p.dvec = b.dvec, p.dq_accum = b.dq_accum;
  p.B = 1, p.T = T, p.H = H, p.Hkv = H, p.D = 64, p.group = 1;
  p.scale = 1.0f / 8.0f, p.scale_log2 = p.scale * 1.4426950408889634f;
  p.causal = true, p.dtype = DType::kBF16;
  return p;
}

template <typename Fn>
float MedianMs(Fn fn, int reps) {
  cudaEvent_t a, z;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&z));
  CHECK_CUDA(fn());  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CHECK_CUDA(cudaEventRecord(a));
    CHECK_CUDA(fn());
    CHECK_CUDA(cudaEventRecord(z));
    CHECK_CUDA(cudaEventSynchronize(z));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, a, z));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(z));
  return ms[ms.size() / 2];
}

std::vector<float> ToHost(const void* p, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  CHECK_CUDA(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

double RelL2(const std::vector<float>& got, const std::vector<float>& want) {
  double e = 0, r = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    e += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    r += double(want[i]) * want[i];
  }
  return std::sqrt(e / std::max(r, 1e-300));
}

template <typename Traits>
void RunVariant(const char* name, const Buffers& b, int T, int H, int reps, float fwd_ms,
                const std::vector<std::vector<float>>* want, std::vector<std::vector<float>>* keep) {
  const AttentionBwdParams p = BwdParams(b, T, H);
  auto bwd = [&] { return cuda::flash::RunFlashBwdTyped<Traits, __nv_bfloat16, true>(p, nullptr); };
  const float ms = MedianMs(bwd, reps);
  CHECK_CUDA(cudaDeviceSynchronize());
  const size_t n = size_t(T) * H * 64;
  std::vector<std::vector<float>> got = {ToHost(b.dq, n), ToHost(b.dk, n), ToHost(b.dv, n)};
  double err = 0;
  if (want)
    for (int i = 0; i < 3; ++i) err = std::max(err, RelL2(got[i], (*want)[i]));
  if (keep) *keep = got;
  const double fwd_flops = 4.0 * H * double(T) * T * 64 / 2;
  std::printf(
      "{\"bench\":\"bwd_tiles\",\"impl\":\"flashtick_%s\",\"N\":%d,\"H\":%d,\"d\":64,\"causal\":true,"
      "\"dtype\":\"bf16\",\"smem_bytes\":%d,\"min_ctas_per_sm\":%d,\"fwd_ms\":%.4f,\"bwd_ms\":%.4f,"
      "\"fwd_bwd_ms\":%.4f,\"fwd_bwd_tflops\":%.1f,\"rel_l2_vs_production\":%.3e}\n",
      name, T, H, Traits::kSmemBytes, Traits::kMinBlocksPerSm, fwd_ms, ms, fwd_ms + ms,
      3.5 * fwd_flops / ((fwd_ms + ms) * 1e-3) / 1e12, err);
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  std::vector<int> ns = {8192, 23400};
  int reps = 10;
  const int H = 12;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) {
      ns.clear();
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ",")) ns.push_back(std::atoi(t));
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: bwd_tiles_bench [--n 8192,23400] [--reps 10]\n");
      return 2;
    }
  }
  for (int T : ns) {
    const size_t n = size_t(T) * H * 64;
    Buffers b;
    for (void** p : {&b.q, &b.k, &b.v, &b.o, &b.dout, &b.dq, &b.dk, &b.dv}) CHECK_CUDA(cudaMalloc(p, n * 2));
    CHECK_CUDA(cudaMalloc(&b.lse, size_t(T) * H * 4));
    CHECK_CUDA(cudaMalloc(&b.dvec, size_t(T) * H * 4));
    CHECK_CUDA(cudaMalloc(&b.dq_accum, n * 4));
    uint64_t seed = 1;
    for (void* p : {b.q, b.k, b.v, b.dout}) CHECK_CUDA(FillNormal16(p, int64_t(n), true, seed++, nullptr));
    AttentionFwdParams f;
    f.q = Arg(b.q, T, H), f.k = Arg(b.k, T, H), f.v = Arg(b.v, T, H), f.o = Arg(b.o, T, H);
    f.lse = b.lse, f.B = 1, f.T = T, f.H = H, f.Hkv = H, f.D = 64, f.group = 1;
    f.scale = 1.0f / 8.0f, f.scale_log2 = f.scale * 1.4426950408889634f, f.causal = true;
    f.dtype = DType::kBF16;
    const float fwd_ms = MedianMs([&] { return cuda::flash::LaunchFlashFwd<64>(f, nullptr); }, reps);
    std::vector<std::vector<float>> prod;
    RunVariant<Prod>("bwd_d64_production", b, T, H, reps, fwd_ms, nullptr, &prod);
    RunVariant<M64x2>("bwd_d64_m64n128w8_2cta", b, T, H, reps, fwd_ms, &prod, nullptr);
    RunVariant<M64x1>("bwd_d64_m64n128w8_1cta", b, T, H, reps, fwd_ms, &prod, nullptr);
    RunVariant<M64N64x3>("bwd_d64_m64n64w4_3cta", b, T, H, reps, fwd_ms, &prod, nullptr);
    for (void* p : {b.q, b.k, b.v, b.o, b.dout, b.dq, b.dk, b.dv}) CHECK_CUDA(cudaFree(p));
    for (float* p : {b.lse, b.dvec, b.dq_accum}) CHECK_CUDA(cudaFree(p));
  }
  return 0;
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) { return flashtick::bench::Main(argc, argv); }
