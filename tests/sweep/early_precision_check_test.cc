// The early precision check (research/sweep/early_precision_check.h): it starts once,
// only for its arm and only when that arm is done; Take answers for that arm (after the
// check has ended) and for no other; the destructor waits for a running check. Then a
// tiny CPU sweep with the check forced early reports the same precision figures as the
// same sweep checking after the arms.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "research/sweep/early_precision_check.h"
#include "research/sweep/sweep_engine.h"
#include "tests/support/tiny_sweep.h"

namespace flashtick {
namespace {

ArmResult Arm(const std::string& id, ArmState state) {
  ArmResult a;
  a.arm_id = id;
  a.state = state;
  return a;
}

TEST(EarlyPrecisionCheck, StartsOnceForItsArmWhenDone) {
  std::atomic<int> runs{0};
  EarlyPrecisionCheck early("n64-s1", [&runs]() -> absl::StatusOr<PrecisionReport> {
    ++runs;
    PrecisionReport r;
    r.ran = true;
    r.arm_id = "n64-s1";
    r.max_rel_logit_error = 0.25;
    return r;
  });
  early.ArmFinished(Arm("n16-s1", ArmState::kDone));       // another arm
  early.ArmFinished(Arm("n64-s1", ArmState::kCancelled));  // not finished
  early.ArmFinished(Arm("n64-s1", ArmState::kFailed));
  EXPECT_FALSE(early.Take("n64-s1").has_value()) << "nothing started yet";
  early.ArmFinished(Arm("n64-s1", ArmState::kDone));
  early.ArmFinished(Arm("n64-s1", ArmState::kDone));  // a second report starts nothing
  auto taken = early.Take("n64-s1");
  ASSERT_TRUE(taken.has_value());
  ASSERT_TRUE(taken->ok()) << taken->status();
  EXPECT_EQ((*taken)->max_rel_logit_error, 0.25);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_FALSE(early.Take("n64-s1").has_value()) << "taken once";
}

// A check that takes 50 ms, fails, and sets *ended as it returns.
EarlyPrecisionCheck::Check SlowFailingCheck(std::atomic<bool>* ended) {
  return [ended]() -> absl::StatusOr<PrecisionReport> {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    *ended = true;
    return absl::FailedPreconditionError("a silent fallback");
  };
}

TEST(EarlyPrecisionCheck, AnotherChosenArmGetsNothingAndAnErrorIsKept) {
  std::atomic<bool> finished{false};
  {
    EarlyPrecisionCheck early("n64-s1", SlowFailingCheck(&finished));
    early.ArmFinished(Arm("n64-s1", ArmState::kDone));
    EXPECT_FALSE(early.Take("n16-s1").has_value());  // the verdict chose another arm
    EXPECT_TRUE(finished.load()) << "Take waits for the running check to end";
  }
  std::atomic<bool> ended{false};
  {
    EarlyPrecisionCheck early("n64-s1", SlowFailingCheck(&ended));
    early.ArmFinished(Arm("n64-s1", ArmState::kDone));
  }  // never taken (a cancelled sweep): the destructor waits
  EXPECT_TRUE(ended.load());
  std::atomic<bool> failed{false};
  EarlyPrecisionCheck failing("n64-s1", SlowFailingCheck(&failed));
  failing.ArmFinished(Arm("n64-s1", ArmState::kDone));
  auto taken = failing.Take("n64-s1");
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->status().code(), absl::StatusCode::kFailedPrecondition);
}

PrecisionReport SweepPrecision(int early_threads) {
  nlohmann::json j = TinySweepJson("early_precision");
  j["precision_check"] = {{"enabled", true}, {"max_windows", 2}};
  auto config = ParseSweepConfig(j.dump());
  EXPECT_TRUE(config.ok()) << config.status();
  SweepEngineOptions o;
  o.dir = ::testing::TempDir() + "/early_precision_" + std::to_string(getpid()) + "_" +
          std::to_string(early_threads);
  std::filesystem::remove_all(o.dir);
  o.device = "cpu";
  o.python = "";
  o.early_precision_threads = early_threads;
  auto out = SweepEngine::Run(*config, o, {});
  EXPECT_TRUE(out.ok()) << out.status();
  std::filesystem::remove_all(o.dir);
  return out.ok() ? out->precision : PrecisionReport{};
}

TEST(EarlyPrecisionCheck, ASweepReportsTheSameFiguresEarlyOrAfterTheArms) {
  const PrecisionReport after = SweepPrecision(0);
  const PrecisionReport early = SweepPrecision(1);
  ASSERT_TRUE(after.ran) << after.note;
  ASSERT_TRUE(early.ran) << early.note;
  EXPECT_TRUE(early.early) << "the verdict chose " << early.arm_id << ", not the arm checked early";
  EXPECT_FALSE(after.early);
  EXPECT_EQ(early.arm_id, after.arm_id);
  EXPECT_EQ(early.date, after.date);
  EXPECT_EQ(early.windows, after.windows);
  EXPECT_EQ(early.positions, after.positions);
  EXPECT_EQ(early.max_rel_logit_error, after.max_rel_logit_error);
  EXPECT_EQ(early.max_abs_prob_error, after.max_abs_prob_error);
  EXPECT_EQ(early.flips, after.flips);
  EXPECT_EQ(early.reference_path, after.reference_path);
}

// A sweep cancelled as the early check's arm finishes: the check is asked to stop (the
// caller's cancel reaches it between layers) and the sweep still ends with its report,
// the precision check not run, whether the cancel came before the other arm finished (a
// cancelled sweep: no verdict, nothing chosen) or after (a verdict whose check was cut).
TEST(EarlyPrecisionCheck, ACancelledSweepEndsWithoutWaitingForItsCheck) {
  nlohmann::json j = TinySweepJson("early_precision_cancel");
  j["precision_check"] = {{"enabled", true}, {"max_windows", 2}};
  j["model"]["layers"] = 2;  // the forward asks its stop between layers
  auto config = ParseSweepConfig(j.dump());
  ASSERT_TRUE(config.ok()) << config.status();
  SweepEngineOptions o;
  o.dir = ::testing::TempDir() + "/early_precision_cancel_" + std::to_string(getpid());
  std::filesystem::remove_all(o.dir);
  o.device = "cpu";
  o.python = "";
  o.early_precision_threads = 1;
  std::atomic<bool> cancel{false};
  SweepHooks hooks;
  hooks.cancel = &cancel;
  hooks.on_arm = [&cancel](const ArmResult& a) {
    if (a.state == ArmState::kDone && a.arm_id.rfind("n32", 0) == 0) cancel = true;
  };
  auto out = SweepEngine::Run(*config, o, hooks);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(cancel.load());
  EXPECT_FALSE(out->precision.ran);
  if (!out->cancelled) {
    EXPECT_EQ(out->precision.note, "cancelled with the sweep before the check finished");
  }
  EXPECT_TRUE(std::filesystem::exists(o.dir + "/report.json"));
  std::filesystem::remove_all(o.dir);
}

}  // namespace
}  // namespace flashtick
