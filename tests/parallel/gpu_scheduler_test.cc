// GPU placement of sweep arms (research/parallel/gpu_scheduler.h): lowest free GPUs,
// waiting while none is free, cancel while waiting, requests larger than the host,
// and no GPUs at all (every arm on the CPU at once). Then a two-arm CPU sweep run
// side by side: SweepHooks::on_placement reports each arm placed on the CPU and
// released, with the busy/total counts the experiment service exports; and the same
// sweep with replicas_per_arm = 2 (data-parallel arms) ends with the same losses.
#include "research/parallel/gpu_scheduler.h"

#include <filesystem>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {
namespace {

TEST(GpuScheduler, PlacesOnFreeGpusAndWaitsWhenNoneIsFree) {
  GpuScheduler s(2);
  EXPECT_EQ(s.total(), 2);
  auto a = s.Acquire(1);
  auto b = s.Acquire(1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, std::vector<int>{0});
  EXPECT_EQ(*b, std::vector<int>{1});
  EXPECT_EQ(s.busy(), 2);
  absl::StatusOr<std::vector<int>> c = absl::UnknownError("not yet");
  std::thread waiter([&] { c = s.Acquire(1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(c.ok()) << "must wait while both GPUs are busy";
  s.Release(*b);
  waiter.join();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, std::vector<int>{1});
  s.Release(*a);
  s.Release(*c);
  auto both = s.Acquire(2);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both, (std::vector<int>{0, 1}));
  std::atomic<bool> cancel{false};
  absl::StatusOr<std::vector<int>> d = absl::UnknownError("not yet");
  std::thread cancelled([&] { d = s.Acquire(1, &cancel); });
  cancel = true;
  cancelled.join();
  EXPECT_EQ(d.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(s.Acquire(3).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GpuScheduler, ArmsShareAGpuUpToTheLimitSpreadingFirst) {
  GpuScheduler s(2, /*arms_per_gpu=*/2);
  auto a = s.Acquire(1), b = s.Acquire(1), c = s.Acquire(1), d = s.Acquire(1);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ(*a, std::vector<int>{0});
  EXPECT_EQ(*b, std::vector<int>{1}) << "the least-loaded GPU first";
  EXPECT_EQ(*c, std::vector<int>{0});
  EXPECT_EQ(*d, std::vector<int>{1});
  EXPECT_EQ(s.busy(), 2);
  absl::StatusOr<std::vector<int>> e = absl::UnknownError("not yet");
  std::thread waiter([&] { e = s.Acquire(1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(e.ok()) << "must wait while both GPUs hold two arms";
  s.Release(*c);
  waiter.join();
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(*e, std::vector<int>{0});
  // A two-GPU (data-parallel) arm needs room on two distinct GPUs.
  s.Release(*a);
  s.Release(*e);
  s.Release(*b);  // GPU 0 empty, GPU 1 holds one arm (d): both have room
  auto pair = s.Acquire(2);
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(*pair, (std::vector<int>{0, 1}));
}

TEST(GpuScheduler, WithoutGpusEveryArmRunsOnTheCpu) {
  GpuScheduler s(0);
  for (int i = 0; i < 3; ++i) {
    auto g = s.Acquire(1);
    ASSERT_TRUE(g.ok());
    EXPECT_TRUE(g->empty());
  }
  EXPECT_EQ(s.busy(), 0);
  EXPECT_EQ(s.total(), 0);
}

SweepConfig PlacementConfig(int replicas) {
  auto c = ParseSweepConfig(nlohmann::json{
      {"name", "placement"},
      {"contexts", {8, 16}},
      {"model", {{"width", 8}, {"layers", 1}, {"heads", 2}, {"kv_heads", 2}, {"mlp_ratio", 2}}},
      {"optimizer", {{"learning_rate", 0.003}, {"warmup_steps", 2}, {"tokens_per_step", 64}}},
      {"training", {{"first_fold_epochs", 1}, {"epochs_per_fold", 1}}},
      {"data",
       {{"synthetic",
         {{"generator", "planted_cue"}, {"seed", 5}, {"days", 6}, {"steps_per_day", 64},
          {"lags", {6}}, {"events_per_lag_per_day", 4}, {"drift_bps", 1.0}}}}},
      {"labels", {{"horizon", 2}}},
      {"walk_forward", {{"train_days", 3}, {"test_days", 1}}},
      {"precision_check", {{"enabled", false}}},
      {"max_parallel_arms", 2},
      {"replicas_per_arm", replicas},
      {"device", "cpu"},
      {"cpu_threads", 2}}
                               .dump());
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

absl::StatusOr<SweepOutcome> RunSweep(const SweepConfig& c, const std::string& name,
                                      std::vector<ArmPlacement>* events) {
  SweepEngineOptions o;
  o.dir = ::testing::TempDir() + "/sweep_placement_" + std::to_string(getpid()) + name;
  std::filesystem::remove_all(o.dir);
  o.python = "";
  auto mu = std::make_shared<std::mutex>();
  SweepHooks hooks;
  hooks.on_placement = [events, mu](const ArmPlacement& p) {
    std::lock_guard<std::mutex> lock(*mu);
    events->push_back(p);
  };
  auto out = SweepEngine::Run(c, o, hooks);
  std::filesystem::remove_all(o.dir);
  return out;
}

TEST(SweepPlacement, ArmsSideBySideAreReportedOnTheCpu) {
  std::vector<ArmPlacement> events;
  auto out = RunSweep(PlacementConfig(1), "one", &events);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(events.size(), 4u) << "placed and released, per arm";
  int placed = 0;
  for (const ArmPlacement& p : events) {
    EXPECT_TRUE(p.gpus.empty()) << p.arm_id << ": the CPU";
    EXPECT_EQ(p.gpus_total, 0);
    EXPECT_EQ(p.gpus_busy, 0);
    placed += p.placed;
  }
  EXPECT_EQ(placed, 2);
}

// replicas_per_arm: each arm trains data-parallel (two CPU replicas, host all-reduce)
// and must end where the one-device arm ends, up to fp32 summation order.
TEST(SweepPlacement, DataParallelArmsTrainLikeOneDeviceArms) {
  std::vector<ArmPlacement> events;
  auto one = RunSweep(PlacementConfig(1), "r1", &events);
  auto two = RunSweep(PlacementConfig(2), "r2", &events);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(one->arms.size(), two->arms.size());
  for (size_t i = 0; i < one->arms.size(); ++i) {
    const ArmResult& a = one->arms[i];
    const ArmResult& b = two->arms[i];
    EXPECT_EQ(b.state, ArmState::kDone);
    EXPECT_EQ(a.step, b.step);
    EXPECT_GT(a.step, 0);
    EXPECT_NEAR(b.loss, a.loss, 1e-4 * a.loss) << a.arm_id << ": final training loss";
    ASSERT_EQ(a.loss_curve.size(), b.loss_curve.size());
    for (size_t k = 0; k < a.loss_curve.size(); ++k)
      EXPECT_NEAR(b.loss_curve[k].loss, a.loss_curve[k].loss, 1e-4 * a.loss_curve[k].loss);
  }
  auto bad = PlacementConfig(1);
  bad.replicas_per_arm = 3;  // the batches 8 and 4 do not split in 3
  EXPECT_FALSE(ParseSweepConfig(SweepConfigToJson(bad)).ok());
}

}  // namespace
}  // namespace flashtick
