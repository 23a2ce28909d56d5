// Data parallelism on GPUs through NCCL (research/parallel/nccl_all_reducer.h). With one
// GPU: an NCCL group of one (the sum is the identity) trains exactly like the plain
// Trainer. With two: DataParallelTrainer on 2 GPUs against one GPU on the whole batch,
// bf16 activations and fp32 masters, for AdamW and Sophia-H: the same loss curve up
// to the order of the sums and to cuBLAS picking other kernels for the half-size
// batches (|Δloss| ≤ 5e-3 per step, and 5× below the loss change the steps make), and
// both replicas' weights bit-identical. Skips, saying why, without
// CUDA, with fewer GPUs than a case needs, or when libnccl.so.2 cannot be loaded.
#include <cmath>

#include "gtest/gtest.h"
#include "tests/trainer/train_test_util.h"
#include "research/parallel/data_parallel_trainer.h"
#include "research/parallel/nccl_all_reducer.h"
#include "research/parallel/nccl_library.h"
#if defined(FLASHTICK_WITH_CUDA)
#include "kernels/cuda/cuda_backend.h"
#endif

namespace flashtick::train_test {
namespace {

int GpuCount() {
#if defined(FLASHTICK_WITH_CUDA)
  return cuda::CudaDeviceCount();
#else
  return 0;
#endif
}

constexpr double kLossTol = 5e-3;

// A model big enough for several buckets and real attention tiles (D = 64).
ModelConfig GpuConfig() {
  ModelConfig c = TinyConfig();
  c.width = 256;
  c.heads = 4;
  c.kv_heads = 2;
  c.layers = 3;
  c.mlp_ratio = 4;
  c.max_context = 512;
  return c;
}

// A smaller peak and a refresh every third step: the values kLossTol was set with.
TrainerOptions Options(OptimizerKind kind) {
  TrainerOptions o = ShortRunOptions(kind, /*seed=*/11);
  o.lr.peak = 1e-3;
  o.hessian_interval = 3;
  return o;
}

void SkipUnless(int gpus) {
  if (GpuCount() < gpus)
    GTEST_SKIP() << "needs " << gpus << " GPU(s), found " << GpuCount();
  auto lib = nccl::NcclLibrary::Get();
  if (!lib.ok()) GTEST_SKIP() << "NCCL not available: " << lib.status();
}

TEST(NcclDataParallel, TwoGpusTrainLikeOneOnTheWholeBatch) {
  SkipUnless(2);
  if (HasFatalFailure() || IsSkipped()) return;
  const Batch batch = MakeBatch(8, 256, GpuConfig().features, 91);
  for (OptimizerKind kind : {OptimizerKind::kAdamW, OptimizerKind::kSophiaH}) {
    SCOPED_TRACE(OptimizerKindName(kind));
    auto be = CreateBackend("cuda", BackendOptions{0, 0});
    ASSERT_TRUE(be.ok()) << be.status();
    auto single = Trainer::Create(GpuConfig(), Options(kind), be->get());
    ASSERT_TRUE(single.ok()) << single.status();
    DataParallelOptions dp;
    dp.device = "cuda";
    dp.replicas = 2;
    dp.bucket_bytes = 256 << 10;  // several buckets for this model
    auto par = DataParallelTrainer::Create(GpuConfig(), Options(kind), dp);
    ASSERT_TRUE(par.ok()) << par.status();
    double first = 0, last = 0, max_diff = 0;
    for (int s = 1; s <= 10; ++s) {
      auto a = (*single)->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
      auto b = (*par)->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
      ASSERT_TRUE(a.ok()) << a.status();
      ASSERT_TRUE(b.ok()) << b.status();
      max_diff = std::max(max_diff, std::abs(a->loss - b->loss));
      EXPECT_NEAR(b->loss, a->loss, kLossTol) << "step " << s;
      EXPECT_EQ(b->hessian_refreshed, a->hessian_refreshed);
      if (s == 1) first = a->loss;
      last = a->loss;
    }
    std::printf("%s: loss %.5f -> %.5f, max |single - 2 GPUs| = %.2e\n", OptimizerKindName(kind),
                first, last, max_diff);
    // The gap between the runs must be small against what training changed.
    EXPECT_GT(first - last, 5 * max_diff) << "the steps must move the loss beyond the gap";
    auto& p0 = (*par)->replica(0).params();
    auto& p1 = (*par)->replica(1).params();
    EXPECT_EQ(*p0.ToHost(p0.values()), *p1.ToHost(p1.values()));
    EXPECT_GT((*par)->reducer(0).launched_early(), 0);
  }
}

TEST(NcclDataParallel, AGroupOfOneIsThePlainTrainer) {
  SkipUnless(1);
  if (HasFatalFailure() || IsSkipped()) return;
  const Batch batch = MakeBatch(2, 128, GpuConfig().features, 92);
  auto be_a = *CreateBackend("cuda", BackendOptions{0, 0});
  auto be_b = *CreateBackend("cuda", BackendOptions{0, 0});
  auto a = *Trainer::Create(GpuConfig(), Options(OptimizerKind::kSophiaH), be_a.get());
  auto b = *Trainer::Create(GpuConfig(), Options(OptimizerKind::kSophiaH), be_b.get());
  auto plan = BucketPlan::Create(b->params().layout(), 1 << 16);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto group = NcclAllReducer::CreateGroup({be_b.get()}, {0}, *plan);
  ASSERT_TRUE(group.ok()) << group.status();
  b->set_all_reducer((*group)[0].get());
  for (int s = 0; s < 4; ++s) {
    auto x = a->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
    auto y = b->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(x->loss, y->loss);  // a sum over one rank changes no bit
  }
  EXPECT_EQ(*a->params().ToHost(a->params().values()), *b->params().ToHost(b->params().values()));
  b->set_all_reducer(nullptr);
}

}  // namespace
}  // namespace flashtick::train_test
