// TMA and mbarrier (kernels/cuda/attention/sm90/tma.cuh) on the GPU: the producer/consumer
// pipeline GEMM the CPU emulator runs in TmaEmuTest (tests/cuda_emu/tma_pipeline_gemm.cuh),
// here on an sm_90 device against the same CPU GEMM, so the tensor maps, swizzle, barrier
// phases and transaction counts the emulator assumes are checked on the hardware. Skips
// without a compute-capability-9.0 GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/half.h"
#include "tests/cuda_ops/tma_gpu_kernel.h"

namespace flashtick {
namespace {

bool HasSm90() {
  int n = 0, major = 0, minor = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return false;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major == 9 && minor == 0;
}

TEST(TmaGpuTest, PipelineMatchesTheCpu) {
  if (!HasSm90()) GTEST_SKIP() << "no compute-capability-9.0 GPU (TMA and wgmma are sm_90a)";
  for (int K : {256, 200}) {
    SCOPED_TRACE(::testing::Message() << "K = " << K);
    std::mt19937 rng(static_cast<uint32_t>(K));
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<uint16_t> a(64 * K), b(64 * K);
    for (auto& x : a) x = DoubleToBf16Bits(normal(rng));
    for (auto& x : b) x = DoubleToBf16Bits(normal(rng));
    std::vector<float> d(64 * 64, NAN);
    const cudaError_t err = testing::RunTmaPipelineGemm(K, a.data(), b.data(), d.data());
    ASSERT_EQ(err, cudaSuccess) << cudaGetErrorString(err);
    for (int m = 0; m < 64; ++m)
      for (int n = 0; n < 64; ++n) {
        double want = 0;
        for (int k = 0; k < K; ++k) want += double(Bf16BitsToFloat(a[m * K + k])) * Bf16BitsToFloat(b[n * K + k]);
        ASSERT_NEAR(d[m * 64 + n], want, 1e-3) << "(" << m << ", " << n << ")";
      }
  }
}

}  // namespace
}  // namespace flashtick
