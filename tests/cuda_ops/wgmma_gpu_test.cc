// The Hopper wgmma layer (kernels/cuda/attention/sm90/wgmma.cuh) on the GPU: the tile GEMM
// of tests/cuda_emu/wgmma_tile_gemm.cuh, which the CPU emulator runs in flash_emu_test,
// here on an sm_90 device, checked against the same CPU GEMM. It checks the descriptors,
// swizzles and fragment layouts the emulator assumes against the hardware. Skips without
// a compute-capability-9.0 GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/cuda_emu/wgmma_reference.h"
#include "tests/cuda_ops/wgmma_gpu_kernel.h"

namespace flashtick {
namespace {

using testing::WgmmaCase;

bool HasSm90() {
  int n = 0, major = 0, minor = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return false;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major == 9 && minor == 0;
}

void RunCase(WgmmaCase c, bool bf16, bool accumulate) {
  SCOPED_TRACE(::testing::Message() << "case " << static_cast<int>(c) << (bf16 ? " bf16" : " fp16")
                                    << " accumulate " << accumulate);
  const testing::WgmmaInputs in = testing::MakeWgmmaInputs(c, bf16, accumulate);
  std::vector<float> d_out(in.d_init.size(), NAN);
  const cudaError_t err = testing::RunWgmmaTileGemm(c, bf16, accumulate, in.a.data(), in.b.data(),
                                                    in.d_init.data(), d_out.data());
  ASSERT_EQ(err, cudaSuccess) << cudaGetErrorString(err);
  const double worst = testing::ExpectWgmmaResult(in, c, bf16, accumulate, d_out);
  std::printf("wgmma on the GPU, case %d (%s, accumulate %d): max |err| %.2e\n",
              static_cast<int>(c), bf16 ? "bf16" : "fp16", accumulate, worst);
}

TEST(WgmmaGpuTest, EveryLayoutMatchesTheCpu) {
  if (!HasSm90()) GTEST_SKIP() << "no compute-capability-9.0 GPU (wgmma is sm_90a)";
  for (WgmmaCase c : {WgmmaCase::kKMajorSw128, WgmmaCase::kBMnMajorSw128, WgmmaCase::kARegisters,
                      WgmmaCase::kInterleave, WgmmaCase::kAMnMajorSw128})
    for (bool bf16 : {true, false})
      for (bool accumulate : {false, true}) RunCase(c, bf16, accumulate);
}

}  // namespace
}  // namespace flashtick
