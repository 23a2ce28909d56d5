// Data parallelism on the CPU (research/parallel/): R replicas, each on its share of the
// batch and summing through the HostAllReducer, against one Trainer on the whole
// batch: the same losses and weights step by step (fp64: to 1e-10; fp32: 1e-5) for
// AdamW and Sophia-H (its Hessian-vector products are summed the same way), with
// buckets small enough that most launch during the backward sweep. Also: the bucket
// plan, the host collective, shards without labels, refused batches, a NaN step that
// every replica refuses together, and the NCCL loader's error.
#include "research/parallel/data_parallel_trainer.h"

#include <cmath>
#include <cstdlib>
#include <thread>

#include "gtest/gtest.h"
#include "tests/trainer/train_test_util.h"
#include "research/parallel/bucket_plan.h"
#include "research/parallel/host_reduce_group.h"
#include "research/parallel/nccl_library.h"

namespace flashtick::train_test {
namespace {

TrainerOptions Options(OptimizerKind kind, DType dtype) {
  TrainerOptions o = ShortRunOptions(kind, /*seed=*/5);
  o.dtype = dtype;
  return o;
}

TEST(BucketPlan, CoversTheBufferInReverseOrderAtTensorBoundaries) {
  auto layout = ParamLayout::ForConfig(TinyConfig());
  ASSERT_TRUE(layout.ok()) << layout.status();
  for (int64_t elements : {int64_t{1}, int64_t{100}, int64_t{1} << 30}) {
    auto plan = BucketPlan::Create(*layout, elements);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const auto& b = plan->buckets();
    int64_t end = layout->total();
    int seen = 0;
    for (size_t k = 0; k < b.size(); ++k) {
      EXPECT_EQ(b[k].offset + b[k].count, end) << "bucket " << k << " must end where the last began";
      end = b[k].offset;
      if (k + 1 < b.size()) {
        EXPECT_GE(b[k].count, elements);
      }
      for (int p : b[k].params) {
        EXPECT_EQ(plan->bucket_of(p), static_cast<int>(k));
        EXPECT_EQ(p, static_cast<int>(layout->params().size()) - 1 - seen++);  // head first
      }
    }
    EXPECT_EQ(end, 0);
    EXPECT_EQ(seen, static_cast<int>(layout->params().size()));
    if (elements == 1) {
      EXPECT_EQ(b.size(), layout->params().size());
    }
    if (elements == (int64_t{1} << 30)) {
      EXPECT_EQ(b.size(), 1u);
    }
  }
  EXPECT_FALSE(BucketPlan::Create(*layout, 0).ok());
}

TEST(HostReduceGroup, EveryRankGetsTheSameSumAndAbortWakesWaiters) {
  constexpr int R = 3, n = 1001;
  HostReduceGroup group(R);
  std::vector<std::vector<float>> bufs(R, std::vector<float>(n));
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < n; ++i) bufs[r][i] = static_cast<float>(0.1 * (r + 1) + i);
  std::vector<std::thread> th;
  std::vector<absl::Status> st(R);
  for (int r = 0; r < R; ++r)
    th.emplace_back([&, r] { st[r] = group.AllReduceSum(r, bufs[r].data(), n, DType::kF32); });
  for (auto& t : th) t.join();
  for (int r = 0; r < R; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r];
    EXPECT_EQ(bufs[r], bufs[0]);
  }
  EXPECT_FLOAT_EQ(bufs[0][7], static_cast<float>(0.6 + 3 * 7));
  HostReduceGroup lonely(2);  // rank 1 never comes: Abort must release rank 0
  absl::Status waiting;
  std::thread t([&] { waiting = lonely.AllReduceSum(0, bufs[0].data(), n, DType::kF32); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  lonely.Abort();
  t.join();
  EXPECT_EQ(waiting.code(), absl::StatusCode::kAborted) << waiting;
}

struct Case {
  OptimizerKind kind;
  DType dtype;
  int replicas;
  int64_t replica_micro;  // micro-batch of each replica (0 = its whole share)
  double tol;
  int hutchinson_samples = 1;  // several HVP sums per refresh
};

void ExpectSameTraining(const Case& c, const Batch& batch, int steps) {
  SCOPED_TRACE(testing::Message() << OptimizerKindName(c.kind) << " " << DTypeName(c.dtype)
                                  << " R=" << c.replicas << " micro=" << c.replica_micro
                                  << " probes=" << c.hutchinson_samples);
  auto be = *CreateBackend("cpu", BackendOptions{1, 0});
  TrainerOptions o = Options(c.kind, c.dtype);
  o.hutchinson_samples = c.hutchinson_samples;
  auto single = Trainer::Create(TinyConfig(), o, be.get());
  ASSERT_TRUE(single.ok()) << single.status();
  o.micro_batch = c.replica_micro;
  DataParallelOptions dp;
  dp.replicas = c.replicas;
  dp.bucket_bytes = 64 * static_cast<int64_t>(DTypeSize(c.dtype));  // several buckets
  auto par = DataParallelTrainer::Create(TinyConfig(), o, dp);
  ASSERT_TRUE(par.ok()) << par.status();
  ASSERT_GT((*par)->reducer(0).plan().buckets().size(), 3u);
  for (int s = 1; s <= steps; ++s) {
    auto a = (*single)->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
    auto b = (*par)->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_NEAR(b->loss, a->loss, c.tol * a->loss) << "step " << s;
    EXPECT_NEAR(b->grad_norm, a->grad_norm, c.tol * a->grad_norm) << "step " << s;
    EXPECT_EQ(b->hessian_refreshed, a->hessian_refreshed);
    EXPECT_EQ(b->tokens, a->tokens);
  }
  const auto want = *(*single)->params().ToHost((*single)->params().values());
  const auto got0 = *(*par)->replica(0).params().ToHost((*par)->replica(0).params().values());
  EXPECT_LT(RelL2(got0, want), c.tol);
  for (int r = 1; r < c.replicas; ++r)  // identical sums keep the replicas identical
    EXPECT_EQ(*(*par)->replica(r).params().ToHost((*par)->replica(r).params().values()), got0);
  EXPECT_GT((*par)->reducer(0).launched_early(), 0) << "no bucket overlapped the backward pass";
}

TEST(DataParallel, ReplicasTrainLikeOneTrainerOnTheWholeBatch) {
  const Batch batch = MakeBatch(4, 10, TinyConfig().features, 77);
  for (OptimizerKind kind : {OptimizerKind::kAdamW, OptimizerKind::kSophiaH}) {
    ExpectSameTraining({kind, DType::kF64, 2, 0, 1e-10}, batch, 6);
    ExpectSameTraining({kind, DType::kF64, 4, 0, 1e-10}, batch, 6);
    ExpectSameTraining({kind, DType::kF32, 2, 0, 1e-5}, batch, 6);
  }
  // Gradient accumulation inside each replica: AdamW's update does not depend on the
  // split (Sophia-H's ĥ covers the last micro-batches by design).
  ExpectSameTraining({OptimizerKind::kAdamW, DType::kF64, 2, 1, 1e-10}, batch, 4);
  ExpectSameTraining({OptimizerKind::kSophiaH, DType::kF64, 2, 0, 1e-10, 3}, batch, 4);
}

TEST(DataParallel, AShardWithoutLabelsStillContributes) {
  Batch batch = MakeBatch(4, 10, TinyConfig().features, 78);
  for (int64_t m = 20; m < 40; ++m) batch.labels[m] = -1;  // replica 1 of 2: no labels
  ExpectSameTraining({OptimizerKind::kSophiaH, DType::kF64, 2, 0, 1e-10}, batch, 3);
}

TEST(DataParallel, BadBatchesAreRefusedAndANanStepChangesNothing) {
  DataParallelOptions dp;
  dp.replicas = 2;
  auto par = DataParallelTrainer::Create(TinyConfig(), Options(OptimizerKind::kAdamW, DType::kF64), dp);
  ASSERT_TRUE(par.ok()) << par.status();
  Batch batch = MakeBatch(4, 6, TinyConfig().features, 79);
  Batch odd = MakeBatch(3, 6, TinyConfig().features, 79);
  EXPECT_EQ((*par)->TrainStep(odd.ticks, odd.labels, 3, 6).status().code(),
            absl::StatusCode::kInvalidArgument);
  Batch bad = batch;
  bad.labels[17] = 5;  // in replica 1's share only: refused before any replica runs
  EXPECT_EQ((*par)->TrainStep(bad.ticks, bad.labels, 4, 6).status().code(),
            absl::StatusCode::kInvalidArgument);
  const auto before = *(*par)->replica(0).params().ToHost((*par)->replica(0).params().values());
  Batch nan = batch;
  nan.ticks[20 * TinyConfig().features] = std::nanf("");  // replica 1's share
  auto st = (*par)->TrainStep(nan.ticks, nan.labels, 4, 6);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("not finite"), std::string::npos) << st.status();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ((*par)->replica(r).step(), 0);
    EXPECT_EQ(*(*par)->replica(r).params().ToHost((*par)->replica(r).params().values()), before);
  }
  auto ok = (*par)->TrainStep(batch.ticks, batch.labels, 4, 6);  // still usable
  EXPECT_TRUE(ok.ok()) << ok.status();
  EXPECT_FALSE(DataParallelTrainer::Create(TinyConfig(), Options(OptimizerKind::kAdamW, DType::kF64),
                                           DataParallelOptions{"tpu", 2, {}, 1, 1024})
                   .ok());
}

TEST(NcclLibrary, AMissingLibrarySaysHowToGetIt) {
  setenv("FLASHTICK_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  auto lib = nccl::NcclLibrary::Get();
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(lib.status().message().find("nvidia-nccl-cu13"), std::string::npos) << lib.status();
  EXPECT_NE(lib.status().message().find("FLASHTICK_NCCL_LIBRARY"), std::string::npos);
}

}  // namespace
}  // namespace flashtick::train_test
