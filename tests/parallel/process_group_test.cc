// ProcessGroup's collectives beyond the rendezvous (research/parallel/process_group.h),
// with ranks on threads, each with its own ProcessGroup (store client and sockets):
// AnyTrue, the agreement a sweep arm over processes takes every step
// (docs/multi_gpu.md, "One sweep arm over processes"), gives every rank the OR of the
// votes, round after round, whichever ranks vote true; a peer that is gone fails it at
// once naming the rank. And a job may build one ProcessGroupTrainer after another
// (an arm's trainer per fold): each meets under a fresh key scope and trains like a
// fresh in-process DataParallelTrainer.
#include "research/parallel/process_group.h"

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "research/parallel/data_parallel_trainer.h"
#include "research/parallel/process_group_trainer.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

// W rendezvoused groups of one job (rank 0 serves the store on a free port).
std::vector<std::unique_ptr<ProcessGroup>> MakeGroups(int W) {
  std::vector<std::unique_ptr<ProcessGroup>> groups(W);
  ProcessGroupConfig c;
  c.world_size = W;
  c.master_port = 0;
  auto g0 = ProcessGroup::Create(c, 10);
  EXPECT_TRUE(g0.ok()) << g0.status();
  if (!g0.ok()) return {};
  groups[0] = *std::move(g0);
  c.master_port = groups[0]->port();
  for (int r = 1; r < W; ++r) {
    c.rank = c.local_rank = r;
    auto g = ProcessGroup::Create(c, 10);
    EXPECT_TRUE(g.ok()) << g.status();
    if (!g.ok()) return {};
    groups[r] = *std::move(g);
  }
  std::vector<std::thread> th;
  for (int r = 0; r < W; ++r)
    th.emplace_back([&, r] { EXPECT_TRUE(groups[r]->Rendezvous().ok()) << "rank " << r; });
  for (auto& t : th) t.join();
  for (auto& g : groups) g->set_collective_timeout_seconds(10);
  return groups;
}

// fn(r) on every rank at once.
template <typename Fn>
void OnEveryRank(int W, Fn fn) {
  std::vector<std::thread> th;
  for (int r = 0; r < W; ++r) th.emplace_back([&, r] { fn(r); });
  for (auto& t : th) t.join();
}

TEST(ProcessGroupAnyTrue, EveryRankGetsTheOrOfTheVotes) {
  for (int W : {2, 3}) {
    SCOPED_TRACE(testing::Message() << "W=" << W);
    auto groups = MakeGroups(W);
    ASSERT_EQ(static_cast<int>(groups.size()), W);
    // Round k: nobody (k % (W+1) == 0), or rank k % (W+1) − 1 alone, or (odd k past
    // 2W) everyone votes true.
    constexpr int kRounds = 24;
    auto vote = [W](int k, int r) { return k % (W + 1) == r + 1 || (k > 2 * W && k % 2 == 1); };
    std::vector<std::vector<int>> got(W, std::vector<int>(kRounds, -1));
    OnEveryRank(W, [&](int r) {
      for (int k = 0; k < kRounds; ++k) {
        absl::StatusOr<bool> any = groups[r]->AnyTrue(vote(k, r));
        ASSERT_TRUE(any.ok()) << "rank " << r << " round " << k << ": " << any.status();
        got[r][k] = *any;
      }
    });
    for (int k = 0; k < kRounds; ++k) {
      bool want = false;
      for (int r = 0; r < W; ++r) want = want || vote(k, r);
      for (int r = 0; r < W; ++r) EXPECT_EQ(got[r][k], want) << "rank " << r << " round " << k;
    }
    for (int r = W - 1; r >= 0; --r) EXPECT_TRUE(groups[r]->Leave().ok()) << "rank " << r;
  }
}

TEST(ProcessGroupAnyTrue, AWorldOfOneIsItsOwnVote) {
  ProcessGroupConfig c;
  c.master_port = 0;
  auto g = ProcessGroup::Create(c, 5);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(*(*g)->AnyTrue(true));
  EXPECT_FALSE(*(*g)->AnyTrue(false));
}

TEST(ProcessGroupAnyTrue, APeerThatIsGoneFailsItAtOnceNamingTheRank) {
  auto groups = MakeGroups(2);
  ASSERT_EQ(groups.size(), 2u);
  OnEveryRank(2, [&](int r) { EXPECT_TRUE(groups[r]->AnyTrue(false).ok()); });
  groups[1].reset();  // rank 1's process exits: its sockets close
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<bool> any = groups[0]->AnyTrue(false);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(any.ok());
  EXPECT_EQ(any.status().code(), absl::StatusCode::kUnavailable) << any.status();
  EXPECT_NE(any.status().message().find("rank 1"), std::string::npos) << any.status();
  EXPECT_LT(secs, 5.0);  // the closed connection, not the 10 s stall timeout
}

TEST(ProcessGroupTrainerScopes, TrainersMadeOneAfterAnotherTrainLikeFreshReplicas) {
  constexpr int W = 2;
  auto groups = MakeGroups(W);
  ASSERT_EQ(groups.size(), 2u);
  ProcessGroupTrainerOptions pg;
  pg.bucket_bytes = 2048;
  pg.collective_timeout_seconds = 10;
  for (uint64_t seed : {5u, 6u, 7u}) {  // three "folds", each a new trainer
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    TrainerOptions o = ShortRunOptions(OptimizerKind::kAdamW, seed);
    o.dtype = DType::kF64;
    std::vector<std::unique_ptr<Backend>> backends;
    std::vector<Backend*> raw;
    for (int r = 0; r < W; ++r) {
      backends.push_back(*CreateBackend("cpu", BackendOptions{}));
      raw.push_back(backends.back().get());
    }
    auto make = [&](Backend* be) { return Trainer::Create(TinyConfig(), o, be); };
    auto threads = DataParallelTrainer::CreateOn(raw, {}, make, pg.bucket_bytes);
    ASSERT_TRUE(threads.ok()) << threads.status();
    std::vector<std::unique_ptr<Backend>> rank_backends;
    for (int r = 0; r < W; ++r) rank_backends.push_back(*CreateBackend("cpu", BackendOptions{}));
    std::vector<std::unique_ptr<ProcessGroupTrainer>> ranks(W);
    OnEveryRank(W, [&](int r) {
      auto t = ProcessGroupTrainer::CreateOn(rank_backends[r].get(), pg, *groups[r], make);
      ASSERT_TRUE(t.ok()) << "rank " << r << ": " << t.status();
      ranks[r] = *std::move(t);
    });
    for (auto& t : ranks) ASSERT_NE(t, nullptr);
    for (int s = 0; s < 2; ++s) {
      const Batch b = MakeBatch(4, 10, TinyConfig().features, 200 + s);
      auto want = (*threads)->TrainStep(b.ticks, b.labels, 4, 10);
      ASSERT_TRUE(want.ok()) << want.status();
      std::vector<absl::StatusOr<StepStats>> got(W, absl::UnknownError("did not run"));
      OnEveryRank(W, [&](int r) { got[r] = ranks[r]->TrainStep(b.ticks, b.labels, 4, 10); });
      for (int r = 0; r < W; ++r) {
        ASSERT_TRUE(got[r].ok()) << "rank " << r << ": " << got[r].status();
        EXPECT_EQ(got[r]->loss, want->loss) << "rank " << r << " step " << s;
      }
    }
  }
  for (int r = W - 1; r >= 0; --r) EXPECT_TRUE(groups[r]->Leave().ok()) << "rank " << r;
}

}  // namespace
}  // namespace flashtick::train_test
