// ProcessGroupTrainer (research/parallel/process_group_trainer.h): one replica per
// "process" (here a thread with its own ProcessGroup: store client, sockets, backend),
// summing over TCP, must train exactly like DataParallelTrainer's in-process replicas:
// the same losses and the same weights bit for bit on every rank (fp64, AdamW and
// Sophia-H, 2 and 4 ranks, small buckets). Bad global batches are refused by every rank
// before any collective; a non-finite step is refused by all ranks together and leaves
// the group usable. The real multi-process run is multi_process_test.py.
#include "research/parallel/process_group_trainer.h"

#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "research/parallel/data_parallel_trainer.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

constexpr int64_t kBucketBytes = 2048;

struct Job {
  std::vector<std::unique_ptr<ProcessGroup>> groups;
  std::vector<std::unique_ptr<ProcessGroupTrainer>> trainers;
};

Job MakeJob(int W, const TrainerOptions& options) {
  Job job;
  job.groups.resize(W);
  job.trainers.resize(W);
  ProcessGroupConfig c;
  c.world_size = W;
  c.master_port = 0;
  auto g0 = ProcessGroup::Create(c, 10);
  EXPECT_TRUE(g0.ok()) << g0.status();
  job.groups[0] = *std::move(g0);
  c.master_port = job.groups[0]->port();
  for (int r = 1; r < W; ++r) {
    c.rank = c.local_rank = r;
    job.groups[r] = *ProcessGroup::Create(c, 10);
  }
  ProcessGroupTrainerOptions pg;
  pg.bucket_bytes = kBucketBytes;
  std::vector<std::thread> th;
  for (int r = 0; r < W; ++r)
    th.emplace_back([&, r] {
      absl::Status s = job.groups[r]->Rendezvous();
      EXPECT_TRUE(s.ok()) << s;
      auto t = ProcessGroupTrainer::Create(TinyConfig(), options, pg, *job.groups[r]);
      EXPECT_TRUE(t.ok()) << t.status();
      if (t.ok()) job.trainers[r] = *std::move(t);
    });
  for (auto& t : th) t.join();
  return job;
}

// One step on every rank at once; each rank's result.
std::vector<absl::StatusOr<StepStats>> Step(Job& job, const Batch& b, int64_t B, int64_t T) {
  const int W = static_cast<int>(job.trainers.size());
  std::vector<absl::StatusOr<StepStats>> out(W, absl::UnknownError("did not run"));
  std::vector<std::thread> th;
  for (int r = 0; r < W; ++r)
    th.emplace_back([&, r] { out[r] = job.trainers[r]->TrainStep(b.ticks, b.labels, B, T); });
  for (auto& t : th) t.join();
  return out;
}

std::vector<double> Weights(Trainer& t) { return *t.params().ToHost(t.params().values()); }

void ExpectSameAsThreads(OptimizerKind kind, int W, int steps) {
  SCOPED_TRACE(testing::Message() << OptimizerKindName(kind) << " W=" << W);
  TrainerOptions o = ShortRunOptions(kind, /*seed=*/5);
  o.dtype = DType::kF64;
  DataParallelOptions dp;
  dp.replicas = W;
  dp.bucket_bytes = kBucketBytes;
  auto threads = DataParallelTrainer::Create(TinyConfig(), o, dp);
  ASSERT_TRUE(threads.ok()) << threads.status();
  Job job = MakeJob(W, o);
  for (auto& t : job.trainers) ASSERT_NE(t, nullptr);
  for (int s = 0; s < steps; ++s) {
    const Batch b = MakeBatch(4, 10, TinyConfig().features, 100 + s);
    auto want = (*threads)->TrainStep(b.ticks, b.labels, 4, 10);
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = Step(job, b, 4, 10);
    for (int r = 0; r < W; ++r) {
      ASSERT_TRUE(got[r].ok()) << "rank " << r << ": " << got[r].status();
      EXPECT_EQ(got[r]->loss, want->loss) << "rank " << r << " step " << s;
      EXPECT_EQ(got[r]->tokens, 40);
    }
  }
  const std::vector<double> want = Weights((*threads)->replica(0));
  for (int r = 0; r < W; ++r) EXPECT_EQ(Weights(job.trainers[r]->trainer()), want) << "rank " << r;
  EXPECT_GT(job.trainers[0]->reducer()->launched_early(), 0);
  // The other ranks leave first: rank 0 (the store) waits for them.
  for (int r = W - 1; r >= 0; --r) EXPECT_TRUE(job.groups[r]->Leave().ok()) << "rank " << r;
}

TEST(ProcessGroupTrainer, TrainsLikeTheInProcessReplicasBitForBit) {
  ExpectSameAsThreads(OptimizerKind::kAdamW, 2, 3);
  ExpectSameAsThreads(OptimizerKind::kAdamW, 4, 3);
  ExpectSameAsThreads(OptimizerKind::kSophiaH, 2, 3);
}

TEST(ProcessGroupTrainer, BadBatchesAreRefusedByEveryRankAndANanStepByAllTogether) {
  TrainerOptions o = ShortRunOptions(OptimizerKind::kAdamW, 5);
  o.dtype = DType::kF64;
  Job job = MakeJob(2, o);
  for (auto& t : job.trainers) ASSERT_NE(t, nullptr);
  const Batch odd = MakeBatch(3, 6, TinyConfig().features, 79);
  for (auto& st : Step(job, odd, 3, 6))
    EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument) << st.status();
  Batch nan = MakeBatch(4, 6, TinyConfig().features, 79);
  nan.ticks[20 * TinyConfig().features] = std::nanf("");  // rank 1's share only
  for (auto& st : Step(job, nan, 4, 6)) {
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.status().message().find("not finite"), std::string::npos) << st.status();
  }
  const Batch ok = MakeBatch(4, 6, TinyConfig().features, 80);
  for (auto& st : Step(job, ok, 4, 6)) EXPECT_TRUE(st.ok()) << st.status();  // still usable
}

TEST(ProcessGroupTrainer, RefusesAnUnknownDevice) {
  ProcessGroupConfig c;
  c.master_port = 0;
  auto g = ProcessGroup::Create(c, 5);
  ASSERT_TRUE(g.ok()) << g.status();
  ProcessGroupTrainerOptions pg;
  pg.device = "tpu";
  auto t =
      ProcessGroupTrainer::Create(TinyConfig(), ShortRunOptions(OptimizerKind::kAdamW, 5), pg, **g);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
}

}  // namespace
}  // namespace flashtick::train_test
