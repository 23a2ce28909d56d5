// The order the sweep's arm pool (research/sweep/arm_pool.h) takes its arms in: plan
// order with one worker; longest N first with several, so the long arms do not start
// last and train alone while the workers that finished the short ones wait. Checked on the
// pure order, and on a tiny CPU sweep through the engine's hooks: with two workers the
// first arm placed is an N = 32 one, with one worker they are placed in plan order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "research/sweep/arm_pool.h"
#include "research/sweep/sweep_engine.h"
#include "tests/support/tiny_sweep.h"

namespace flashtick {
namespace {

std::vector<ArmSlot> Slots(const std::vector<int64_t>& contexts) {
  std::vector<ArmSlot> slots;
  for (int64_t n : contexts) slots.push_back(ArmSlot{n, 1, "", {}});
  return slots;
}

TEST(ArmTakeOrder, OneWorkerKeepsThePlanOrder) {
  EXPECT_EQ(ArmTakeOrder(Slots({8, 8, 32, 32, 128}), 1), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(ArmTakeOrder({}, 1).empty());
}

TEST(ArmTakeOrder, SeveralWorkersTakeTheLongestNFirstThenPlanOrder) {
  // Slots by N, then seed, as the engine plans them.
  EXPECT_EQ(ArmTakeOrder(Slots({8, 8, 32, 32, 128}), 3), (std::vector<int>{4, 2, 3, 0, 1}));
  EXPECT_EQ(ArmTakeOrder(Slots({512, 4096, 32768}), 2), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(ArmTakeOrder(Slots({64}), 4), (std::vector<int>{0}));
}

// The arms in the order they were placed to train, from the engine's on_placement hook.
std::vector<std::string> StartOrder(int parallel) {
  nlohmann::json j = TinySweepJson("take_order");
  j["seeds"] = {1, 2};
  j["max_parallel_arms"] = parallel;
  j["precision_check"] = {{"enabled", false}};
  auto config = ParseSweepConfig(j.dump());
  EXPECT_TRUE(config.ok()) << config.status();
  SweepEngineOptions o;
  o.dir = ::testing::TempDir() + "/arm_take_order_" + std::to_string(getpid()) + "_" +
          std::to_string(parallel);
  std::filesystem::remove_all(o.dir);
  o.device = "cpu";
  o.python = "";  // no plots
  std::mutex mu;
  std::vector<std::string> started;
  SweepHooks hooks;
  hooks.on_placement = [&](const ArmPlacement& p) {  // an arm is placed, then trains
    std::lock_guard<std::mutex> lock(mu);
    if (p.placed) started.push_back(p.arm_id);
  };
  auto r = SweepEngine::Run(*config, o, hooks);
  EXPECT_TRUE(r.ok()) << r.status();
  std::filesystem::remove_all(o.dir);
  return started;
}

TEST(ArmPool, TwoWorkersStartTheLongestArmsFirst) {
  // Each worker's first arm is one of the first two taken, so whichever worker is placed
  // first places an N = 32 arm, however the threads are scheduled. (Which arm is placed
  // second is up to the scheduler: a worker may finish its first arm and place its
  // second before the other worker's first placement is announced.)
  const std::vector<std::string> started = StartOrder(2);
  ASSERT_EQ(started.size(), 4u);
  EXPECT_TRUE(started[0] == "n32-s1" || started[0] == "n32-s2") << started[0];
  EXPECT_EQ(std::set<std::string>(started.begin(), started.end()),
            (std::set<std::string>{"n8-s1", "n8-s2", "n32-s1", "n32-s2"}));
}

TEST(ArmPool, OneWorkerStartsInPlanOrder) {
  EXPECT_EQ(StartOrder(1), (std::vector<std::string>{"n8-s1", "n8-s2", "n32-s1", "n32-s2"}));
}

}  // namespace
}  // namespace flashtick
