// The flash_cuda backend itself (kernels/cuda/cuda_backend.cc, cuda_device.cc): name and
// kernel paths, Supports per dtype, used/peak memory accounting (including launcher
// scratch), out of memory as ResourceExhausted (never a crash, and the backend keeps
// working after it), copies in every direction with host-visible completion, Zero,
// the errors for host tensors and unsupported variants, and BackendOptions'
// attention_fwd_splits.
#include <cmath>
#include <cstring>
#include <numeric>

#ifdef FLASHTICK_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "absl/strings/match.h"
#include "kernels/attention_dispatch.h"
#include "tests/cuda_ops/gpu_test_util.h"

namespace flashtick::testing_gpu {
namespace {

using CudaBackendTest = GpuTest;

TEST_F(CudaBackendTest, NameDeviceAndKernelPaths) {
  EXPECT_EQ(gpu().name(), "flash_cuda");
  EXPECT_EQ(gpu().device(), DeviceKind::kCuda);
  OpDesc d;
  d.dtype = DType::kBF16;
  for (Op op : {Op::kMatmul, Op::kLayerNorm, Op::kAttentionFwd}) {
    d.op = op;
    d.attention.head_dim = 64;
    const std::string path = gpu().KernelPath(d);
    // Attention may name cuDNN's SDPA, or both while auto has not decided yet
    // (kernels/attention_dispatch.h).
    EXPECT_TRUE(absl::StartsWith(path, "flash_cuda") || absl::StartsWith(path, "cudnn_sdpa") ||
                absl::StartsWith(path, "attention_auto(flash_cuda"))
        << path;
  }
  d.op = Op::kMatmul;
  EXPECT_TRUE(absl::StrContains(gpu().KernelPath(d), "cublaslt")) << gpu().KernelPath(d);
}

TEST_F(CudaBackendTest, SupportsOnlyImplementedVariants) {
  OpDesc d;
  auto supports = [&](Op op, DType dt) {
    d.op = op;
    d.dtype = dt;
    return gpu().Supports(d);
  };
  for (Op op : {Op::kMatmul, Op::kLayerNormBwd, Op::kGeluBwdBwd, Op::kSoftmaxCrossEntropy}) {
    EXPECT_TRUE(supports(op, DType::kBF16)) << OpName(op);
    EXPECT_TRUE(supports(op, DType::kF16)) << OpName(op);
    EXPECT_TRUE(supports(op, DType::kF32)) << OpName(op);
    EXPECT_FALSE(supports(op, DType::kF64)) << OpName(op);
  }
  EXPECT_TRUE(supports(Op::kAdamW, DType::kF32));
  EXPECT_FALSE(supports(Op::kAdamW, DType::kBF16));
  EXPECT_FALSE(supports(Op::kSophiaH, DType::kF64));
  EXPECT_TRUE(supports(Op::kCast, DType::kF64));
  EXPECT_FALSE(supports(Op::kAttentionFwd, DType::kF32));

  // Run refuses an unsupported variant with Unimplemented, before touching tensors.
  d.op = Op::kLayerNorm;
  d.dtype = DType::kF64;
  const absl::Status s = gpu().Run(d, {}, {});
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
}

TEST_F(CudaBackendTest, HostTensorIsInvalidArgument) {
  std::vector<float> host(64, 1.0f);
  Tensor y = Empty(gpu(), DType::kF32, {64});
  OpDesc d;
  d.op = Op::kGelu;
  d.dtype = DType::kF32;
  const TensorView x = MakeView(host.data(), DType::kF32, DeviceKind::kCpu, {64});
  const absl::Status s = gpu().Run(d, {x}, {y.view});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "not on the GPU")) << s;
}

TEST_F(CudaBackendTest, MemoryAccountingUsedAndPeak) {
  const MemoryStats before = gpu().Memory();
  EXPECT_GT(before.total_bytes, 0);
  constexpr size_t kBytes = size_t{3} << 20;
  {
    auto a = gpu().Allocate(kBytes);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(gpu().Memory().used_bytes, before.used_bytes + static_cast<int64_t>(kBytes));
    EXPECT_GE(gpu().Memory().peak_bytes, before.used_bytes + static_cast<int64_t>(kBytes));
  }
  ASSERT_TRUE(gpu().Synchronize().ok());
  EXPECT_EQ(gpu().Memory().used_bytes, before.used_bytes);
  gpu().ResetPeakMemory();
  EXPECT_EQ(gpu().Memory().peak_bytes, gpu().Memory().used_bytes);

  // Launcher scratch (LayerNormBwd's row statistics and partials) is counted while the
  // op is enqueued and released afterwards: peak rises, used returns.
  const int64_t M = 4096, C = 256;
  Tensor x = Place(gpu(), DType::kBF16, {M, C}, Uniform(M * C, 1));
  Tensor dy = Place(gpu(), DType::kBF16, {M, C}, Uniform(M * C, 2));
  Tensor gamma = Place(gpu(), DType::kF32, {C}, Uniform(C, 3));
  Tensor dx = Empty(gpu(), DType::kBF16, {M, C});
  Tensor dg = Empty(gpu(), DType::kF32, {C}), db = Empty(gpu(), DType::kF32, {C});
  const int64_t used = gpu().Memory().used_bytes;
  gpu().ResetPeakMemory();
  OpDesc d;
  d.op = Op::kLayerNormBwd;
  d.dtype = DType::kBF16;
  ASSERT_TRUE(gpu().Run(d, {x.view, gamma.view, dy.view}, {dx.view, dg.view, db.view}).ok());
  ASSERT_TRUE(gpu().Synchronize().ok());
  EXPECT_GE(gpu().Memory().peak_bytes, used + M * 2 * static_cast<int64_t>(sizeof(float)));
  EXPECT_EQ(gpu().Memory().used_bytes, used);
}

TEST_F(CudaBackendTest, OutOfMemoryIsResourceExhaustedAndRecoverable) {
  const int64_t total = gpu().Memory().total_bytes;
  ASSERT_GT(total, 0);
  const size_t ask = static_cast<size_t>(total) * 2;
  auto a = gpu().Allocate(ask);
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(a.status())) << a.status();
  EXPECT_TRUE(absl::StrContains(a.status().message(), std::to_string(ask))) << a.status();
  EXPECT_TRUE(absl::StrContains(a.status().message(), "bytes free")) << a.status();

  // Exhaust memory for real in 4 GiB pieces, then check the backend still works.
  {
    std::vector<std::shared_ptr<void>> held;
    absl::Status last;
    for (int i = 0; i < 1024; ++i) {
      auto piece = gpu().Allocate(size_t{4} << 30);
      if (!piece.ok()) {
        last = piece.status();
        break;
      }
      held.push_back(*piece);
    }
    EXPECT_TRUE(absl::IsResourceExhausted(last)) << last;
  }
  ASSERT_TRUE(gpu().Synchronize().ok());
  Tensor x = Place(gpu(), DType::kF32, {256}, Uniform(256, 7));
  Tensor y = Empty(gpu(), DType::kF32, {256});
  OpDesc d;
  d.op = Op::kGelu;
  d.dtype = DType::kF32;
  const absl::Status s = gpu().Run(d, {x.view}, {y.view});
  EXPECT_TRUE(s.ok()) << "a launch after OOM must not see a stale error: " << s;
  EXPECT_TRUE(gpu().Synchronize().ok());
}

TEST_F(CudaBackendTest, CopyRoundTripsInEveryDirection) {
  constexpr size_t kN = (size_t{1} << 20) + 13;  // not a multiple of anything nice
  std::vector<uint8_t> src(kN), back(kN, 0);
  std::iota(src.begin(), src.end(), uint8_t{7});
  auto d0 = gpu().Allocate(kN), d1 = gpu().Allocate(kN);
  ASSERT_TRUE(d0.ok() && d1.ok());
  ASSERT_TRUE(gpu().Copy(d0->get(), DeviceKind::kCuda, src.data(), DeviceKind::kCpu, kN).ok());
  // The source may be reused as soon as Copy returns.
  std::memset(src.data(), 0, 16);
  ASSERT_TRUE(gpu().Copy(d1->get(), DeviceKind::kCuda, d0->get(), DeviceKind::kCuda, kN).ok());
  // Device to host is complete on return: read without Synchronize.
  ASSERT_TRUE(gpu().Copy(back.data(), DeviceKind::kCpu, d1->get(), DeviceKind::kCuda, kN).ok());
  for (size_t i = 0; i < kN; ++i)
    ASSERT_EQ(back[i], static_cast<uint8_t>(7 + i)) << "byte " << i;

  ASSERT_TRUE(gpu().Zero(d1->get(), kN).ok());
  ASSERT_TRUE(gpu().Copy(back.data(), DeviceKind::kCpu, d1->get(), DeviceKind::kCuda, kN).ok());
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(back[i], 0) << "byte " << i;

  std::vector<uint8_t> h2(kN);
  ASSERT_TRUE(gpu().Copy(h2.data(), DeviceKind::kCpu, back.data(), DeviceKind::kCpu, kN).ok());
  EXPECT_TRUE(gpu().Copy(d0->get(), DeviceKind::kCuda, src.data(), DeviceKind::kCpu, 0).ok());
}

#ifdef FLASHTICK_WITH_CUDA
TEST_F(CudaBackendTest, CopyFromPinnedHostMemoryIsCompleteOnReturn) {
  constexpr size_t kN = size_t{64} << 20;
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, kN), cudaSuccess);
  auto* p = static_cast<uint8_t*>(pinned);
  for (size_t i = 0; i < kN; ++i) p[i] = static_cast<uint8_t>(i * 31 + 1);
  auto dev = gpu().Allocate(kN);
  ASSERT_TRUE(dev.ok());
  ASSERT_TRUE(gpu().Copy(dev->get(), DeviceKind::kCuda, pinned, DeviceKind::kCpu, kN).ok());
  std::memset(pinned, 0, kN);  // overwriting right after Copy must not change the device copy
  ASSERT_TRUE(gpu().Copy(pinned, DeviceKind::kCpu, dev->get(), DeviceKind::kCuda, kN).ok());
  for (size_t i = 0; i < kN; i += 4099) ASSERT_EQ(p[i], static_cast<uint8_t>(i * 31 + 1)) << i;
  cudaFreeHost(pinned);
}
#endif

TEST_F(CudaBackendTest, AllocationOutlivesBackend) {
  std::shared_ptr<void> keep;
  {
    auto b = CreateBackend("cuda");
    ASSERT_TRUE(b.ok());
    auto a = (*b)->Allocate(1 << 20);
    ASSERT_TRUE(a.ok());
    keep = *a;
  }
  keep.reset();  // frees through the device state the allocation kept alive
  SUCCEED();
}

// BackendOptions::attention_fwd_splits fixes the forward's key splits. One head of a
// long causal row is where the launcher's own choice splits (FlashFwdNumSplits); with
// 4 splits the fp32 partials (4·T·(D+1) floats) show in the peak, with 1 (never split)
// no scratch is taken, and both outputs match the launcher's choice to bf16 rounding.
TEST_F(CudaBackendTest, AttentionFwdSplitsOption) {
  SetAttentionImplOverride(AttentionImpl::kFlash);  // the option is ours, not cuDNN's
  const int64_t B = 1, T = 2500, H = 1, D = 64;
  const std::vector<double> q = Uniform(B * T * H * D, 11), k = Uniform(B * T * H * D, 12),
                            v = Uniform(B * T * H * D, 13);
  auto run = [&](int splits, int64_t* peak_extra) {
    BackendOptions options;
    options.attention_fwd_splits = splits;
    auto b = CreateBackend("cuda", options);
    EXPECT_TRUE(b.ok()) << b.status();
    if (!b.ok()) return std::vector<double>();
    Backend& g = **b;
    Tensor tq = Place(g, DType::kBF16, {B, T, H, D}, q), tk = Place(g, DType::kBF16, {B, T, H, D}, k),
           tv = Place(g, DType::kBF16, {B, T, H, D}, v);
    Tensor o = Empty(g, DType::kBF16, {B, T, H, D}), l = Empty(g, DType::kF32, {B, H, T});
    const int64_t used = g.Memory().used_bytes;
    g.ResetPeakMemory();
    OpDesc d;
    d.op = Op::kAttentionFwd;
    d.dtype = DType::kBF16;
    d.attention.causal = true;
    d.attention.head_dim = static_cast<int>(D);
    const absl::Status st = g.Run(d, {tq.view, tk.view, tv.view}, {o.view, l.view});
    EXPECT_TRUE(st.ok()) << st;
    EXPECT_TRUE(g.Synchronize().ok());
    *peak_extra = g.Memory().peak_bytes - used;
    return Fetch(g, o);
  };
  int64_t extra_auto = 0, extra_1 = 0, extra_4 = 0;
  const std::vector<double> o_auto = run(0, &extra_auto);
  const std::vector<double> o_1 = run(1, &extra_1);
  const std::vector<double> o_4 = run(4, &extra_4);
  SetAttentionImplOverride(std::nullopt);
  const int64_t partials = 4 * B * H * T * (D + 1) * static_cast<int64_t>(sizeof(float));
  EXPECT_EQ(extra_1, 0);
  EXPECT_GE(extra_4, partials);
  EXPECT_GT(extra_auto, 0) << "the launcher's own choice should split this shape";
  ASSERT_EQ(o_1.size(), o_auto.size());
  ASSERT_EQ(o_4.size(), o_auto.size());
  double num1 = 0, num4 = 0, den = 0;
  for (size_t i = 0; i < o_auto.size(); ++i) {
    num1 += (o_1[i] - o_auto[i]) * (o_1[i] - o_auto[i]);
    num4 += (o_4[i] - o_auto[i]) * (o_4[i] - o_auto[i]);
    den += o_auto[i] * o_auto[i];
  }
  EXPECT_LT(std::sqrt(num1 / den), 1e-2);
  EXPECT_LT(std::sqrt(num4 / den), 1e-2);
}

}  // namespace
}  // namespace flashtick::testing_gpu
