// Resume and cancel of the sweep engine (research/sweep/sweep_engine.h) on a small
// CPU sweep (two arms, N = 8 and 32):
//   * a crash: a child process runs the sweep and is SIGKILLed while the second
//     arm trains (no chance to save anything); the sweep run again on the same
//     directory resumes from the last checkpoint and ends with exactly the daily
//     returns, verdict and final loss of an uninterrupted run;
//   * cancel: stops between steps, keeps the finished arm and writes a report of
//     it (no verdict); running again finishes the rest, again exactly.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <nlohmann/json.hpp>

#include "research/sweep/arm_runner.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

SweepConfig Tiny(nlohmann::json training = {{"first_fold_epochs", 3},
                                            {"epochs_per_fold", 1},
                                            {"checkpoint_every_steps", 4}}) {
  auto c = ParseSweepConfig(nlohmann::json{
      {"name", "resume"},
      {"contexts", {8, 32}},
      {"model", {{"width", 8}, {"layers", 1}, {"heads", 2}, {"kv_heads", 2}, {"mlp_ratio", 2}}},
      {"optimizer", {{"learning_rate", 0.003}, {"warmup_steps", 2}, {"tokens_per_step", 256}}},
      {"training", training},
      {"data",
       {{"synthetic",
         {{"generator", "planted_cue"}, {"seed", 5}, {"days", 10}, {"steps_per_day", 256},
          {"lags", {6, 24}}, {"events_per_lag_per_day", 6}, {"drift_bps", 1.0}}}}},
      {"labels", {{"horizon", 2}}},
      {"walk_forward", {{"train_days", 3}, {"test_days", 1}}},
      {"gates", {{"pbo_blocks", 6}}},
      {"precision_check", {{"enabled", false}}},
      {"device", "cpu"},
      {"cpu_threads", 1}}
                                  .dump());
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

std::string Dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/sweep_resume_" + std::to_string(getpid()) + "_" + name;
  fs::remove_all(d);
  return d;
}

SweepEngineOptions Options(const std::string& dir) {
  SweepEngineOptions o;
  o.dir = dir;
  o.device = "cpu";
  o.python = "";  // no plots needed here
  return o;
}

void ExpectSameResults(const SweepOutcome& a, const SweepOutcome& b) {
  ASSERT_EQ(a.arms.size(), b.arms.size());
  for (size_t i = 0; i < a.arms.size(); ++i) {
    EXPECT_EQ(b.arms[i].state, ArmState::kDone);
    EXPECT_EQ(a.arms[i].step, b.arms[i].step);
    ASSERT_EQ(a.arms[i].days.size(), b.arms[i].days.size());
    for (size_t d = 0; d < a.arms[i].days.size(); ++d) {
      EXPECT_EQ(a.arms[i].days[d].daily_return, b.arms[i].days[d].daily_return)
          << a.arms[i].arm_id << " day " << d;
      EXPECT_EQ(a.arms[i].days[d].metrics.log_loss, b.arms[i].days[d].metrics.log_loss);
    }
    EXPECT_EQ(a.arms[i].loss, b.arms[i].loss) << "final training loss, bit for bit";
    // The call-step tallies and the attention diagnostic survive state.json.
    ASSERT_EQ(a.arms[i].events.size(), b.arms[i].events.size());
    for (size_t e = 0; e < a.arms[i].events.size(); ++e) {
      const EventTally &x = a.arms[i].events[e], &y = b.arms[i].events[e];
      EXPECT_EQ(x.hits, y.hits) << a.arms[i].arm_id << " lag " << x.lag;
      EXPECT_EQ(x.attention_events, y.attention_events) << a.arms[i].arm_id << " lag " << x.lag;
      EXPECT_EQ(x.cue_weight, y.cue_weight) << a.arms[i].arm_id << " lag " << x.lag;
      EXPECT_EQ(x.self_weight, y.self_weight) << a.arms[i].arm_id << " lag " << x.lag;
      EXPECT_EQ(x.cue_rollout, y.cue_rollout) << a.arms[i].arm_id << " lag " << x.lag;
    }
  }
  ASSERT_TRUE(a.verdict.has_value() && b.verdict.has_value());
  EXPECT_EQ(a.verdict->Summary(), b.verdict->Summary());
}

int64_t StepOnDisk(const std::string& arm_dir) {
  auto r = ArmRunner::LoadState(arm_dir);
  return r.ok() ? r->step : -1;
}

TEST(SweepResume, AfterAKillTheSweepEndsAsIfUninterrupted) {
  const SweepConfig c = Tiny();
  const std::string straight_dir = Dir("straight");
  auto straight = SweepEngine::Run(c, Options(straight_dir), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  ASSERT_FALSE(straight->cancelled);
  // The report's attention table (where the call step looks) has its rollout column
  // whenever an arm saw a cue.
  int64_t looked = 0;
  for (const ArmResult& a : straight->arms) {
    for (const EventTally& t : a.events) looked += t.attention_events;
  }
  ASSERT_GT(looked, 0);
  std::ifstream md_file(straight_dir + "/report.md");
  const std::string md((std::istreambuf_iterator<char>(md_file)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("### Where the call step looks"), std::string::npos);
  EXPECT_NE(md.find("rollout onto the cue"), std::string::npos);
  const int64_t total = straight->arms[1].total_steps;
  ASSERT_GT(total, 12);

  const std::string dir = Dir("killed");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto r = SweepEngine::Run(c, Options(dir), {});
    _exit(r.ok() ? 0 : 1);
  }
  // Kill it once the second arm has a checkpoint part way through.
  const std::string arm2 = dir + "/arms/" + straight->arms[1].arm_id;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (StepOnDisk(arm2) < total / 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child finished before it was killed";
  const int64_t at = StepOnDisk(arm2);
  std::printf("killed with arm %s at step %lld of %lld\n", straight->arms[1].arm_id.c_str(),
              static_cast<long long>(at), static_cast<long long>(total));
  ASSERT_LT(at, total);

  auto resumed = SweepEngine::Run(c, Options(dir), {});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_FALSE(resumed->cancelled);
  ExpectSameResults(*straight, *resumed);
}

TEST(SweepResume, CancelKeepsTheFinishedArmAndResumesExactly) {
  const SweepConfig c = Tiny();
  auto straight = SweepEngine::Run(c, Options(Dir("straight2")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();

  const std::string dir = Dir("cancelled");
  std::atomic<bool> cancel{false};
  SweepHooks hooks;
  hooks.cancel = &cancel;
  hooks.on_progress = [&](const SweepEvent& e) {
    if (e.arm.arm_index == 1 && e.arm.step >= 5) cancel = true;
  };
  auto partial = SweepEngine::Run(c, Options(dir), hooks);
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_TRUE(partial->cancelled);
  EXPECT_FALSE(partial->verdict.has_value());
  EXPECT_EQ(partial->arms[0].state, ArmState::kDone);
  EXPECT_EQ(partial->arms[1].state, ArmState::kCancelled);
  EXPECT_LT(partial->arms[1].step, partial->arms[1].total_steps);
  // The finished arm's results are in the report of what finished.
  std::ifstream in(dir + "/report.json");
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["status"], "cancelled");
  EXPECT_EQ(report["arms"][0]["days"].size(), straight->arms[0].days.size());
  EXPECT_TRUE(report["verdict"].is_null());

  auto resumed = SweepEngine::Run(c, Options(dir), {});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameResults(*straight, *resumed);
}

// The early-stopping training block of the tests below (30 epochs of 2 days: long
// enough that validation stops the first fold), with `extra` fields added.
nlohmann::json EarlyStopping(const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json t = {{"first_fold_epochs", 30},   {"epochs_per_fold", 1},
                      {"checkpoint_every_steps", 3}, {"validation_days", 1},
                      {"validate_every_steps", 2}, {"validation_batches", 2},
                      {"patience", 2}};
  t.update(extra);
  return t;
}

// Runs `c` in `dir` until arm `arm` reaches step `step`, cancels, then resumes it to
// the end and returns the resumed outcome.
absl::StatusOr<SweepOutcome> CancelThenResume(const SweepConfig& c, const std::string& dir,
                                              int arm, int64_t step) {
  std::atomic<bool> cancel{false};
  SweepHooks hooks;
  hooks.cancel = &cancel;
  hooks.on_progress = [&](const SweepEvent& e) {
    if (e.arm.arm_index == arm && e.arm.step >= step) cancel = true;
  };
  auto partial = SweepEngine::Run(c, Options(dir), hooks);
  if (!partial.ok()) return partial.status();
  return SweepEngine::Run(c, Options(dir), {});
}

// Early stopping (sweep_config.h): validation on a held-out day, a stop that skips the
// plan's remaining steps, and a cancel + resume through it ending exactly as a straight
// run does.
TEST(SweepResume, EarlyStoppingResumesExactly) {
  const SweepConfig c = Tiny(EarlyStopping());
  auto straight = SweepEngine::Run(c, Options(Dir("early_straight")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  for (const ArmResult& a : straight->arms) {
    EXPECT_FALSE(a.validation_curve.empty()) << a.arm_id;
    EXPECT_EQ(a.skipped_steps > 0, !a.stop_reason.empty()) << a.arm_id;
    EXPECT_NE(a.stop_reason.find("early stop"), std::string::npos)
        << a.arm_id << " should stop on its validation loss (30 epochs of 2 days)";
    std::printf("%s: %zu validation checks, best %.4f at step %lld, stop: %s\n",
                a.arm_id.c_str(), a.validation_curve.size(), a.best_validation_loss,
                static_cast<long long>(a.best_validation_step),
                a.stop_reason.empty() ? "(planned end)" : a.stop_reason.c_str());
  }
  auto resumed = CancelThenResume(c, Dir("early_cancelled"), /*arm=*/1, /*step=*/4);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameResults(*straight, *resumed);
  for (size_t i = 0; i < straight->arms.size(); ++i) {
    EXPECT_EQ(straight->arms[i].stop_reason, resumed->arms[i].stop_reason);
    EXPECT_EQ(straight->arms[i].skipped_steps, resumed->arms[i].skipped_steps);
  }
}

// The context curriculum and the early-stopping floor: the same early-stopping
// config as above, but no stop before step 12 of the first fold (and the curriculum's
// 10 warmup steps), resumed exactly through a cancel.
TEST(SweepResume, CurriculumAndStoppingFloorResumeExactly) {
  const SweepConfig c = Tiny(EarlyStopping({{"early_stop_min_steps", 12},
                                            {"context_warmup_steps", 10},
                                            {"context_warmup_start", 2}}));
  auto straight = SweepEngine::Run(c, Options(Dir("floor_straight")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  for (const ArmResult& a : straight->arms) {
    if (a.stop_reason.empty()) continue;
    // "fold 0 early stop: ... (S of P steps)": S ≥ the floor.
    const size_t at = a.stop_reason.rfind('(');
    ASSERT_NE(at, std::string::npos) << a.stop_reason;
    EXPECT_GE(std::stoll(a.stop_reason.substr(at + 1)), 12) << a.stop_reason;
  }
  auto resumed = CancelThenResume(c, Dir("floor_cancelled"), /*arm=*/0, /*step=*/5);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameResults(*straight, *resumed);
  // The curriculum changes what the first fold trains on.
  const SweepConfig plain = Tiny(EarlyStopping({{"early_stop_min_steps", 12}}));
  auto without = SweepEngine::Run(plain, Options(Dir("floor_plain")), {});
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_NE(straight->arms[0].loss_curve.front().loss, without->arms[0].loss_curve.front().loss);
}

// Validation on the planted events' call steps only (training.validate_on "calls"):
// the loss is a different number from the all-steps one on the same batches, early
// stopping says which loss it stopped on, and a cancelled run resumes exactly.
TEST(SweepResume, CallStepValidationStopsAndResumesExactly) {
  const SweepConfig all = Tiny(EarlyStopping());
  const SweepConfig calls = Tiny(EarlyStopping({{"validate_on", "calls"}}));
  auto a = SweepEngine::Run(all, Options(Dir("calls_all")), {});
  ASSERT_TRUE(a.ok()) << a.status();
  auto c = SweepEngine::Run(calls, Options(Dir("calls_straight")), {});
  ASSERT_TRUE(c.ok()) << c.status();
  for (size_t i = 0; i < c->arms.size(); ++i) {
    const ArmResult& arm = c->arms[i];
    ASSERT_FALSE(arm.validation_curve.empty()) << arm.arm_id;
    ASSERT_FALSE(a->arms[i].validation_curve.empty()) << arm.arm_id;
    // The first check comes before any update differs between the two runs' weights
    // (same seed, same training batches), so only what the loss is taken over differs.
    EXPECT_EQ(arm.validation_curve.front().step, a->arms[i].validation_curve.front().step);
    EXPECT_NE(arm.validation_curve.front().loss, a->arms[i].validation_curve.front().loss) << arm.arm_id;
    if (!arm.stop_reason.empty()) {
      EXPECT_NE(arm.stop_reason.find("early stop: call-step validation loss"), std::string::npos)
          << arm.stop_reason;
    }
    std::printf("%s: first validation loss over call steps %.4f, over all steps %.4f; stop: %s\n",
                arm.arm_id.c_str(), arm.validation_curve.front().loss,
                a->arms[i].validation_curve.front().loss,
                arm.stop_reason.empty() ? "(planned end)" : arm.stop_reason.c_str());
  }
  auto resumed = CancelThenResume(calls, Dir("calls_cancelled"), /*arm=*/1, /*step=*/4);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameResults(*c, *resumed);
}

// The time budget stops every fold after its minimum steps once the arm has trained
// that long; the arm still scores every test day.
TEST(SweepResume, TimeBudgetStopsEachFoldAtItsMinimum) {
  const SweepConfig c = Tiny({{"first_fold_epochs", 6},
                              {"epochs_per_fold", 1},
                              {"min_steps_per_fold", 2},
                              {"max_train_seconds", 1e-9}});
  auto r = SweepEngine::Run(c, Options(Dir("budget")), {});
  ASSERT_TRUE(r.ok()) << r.status();
  for (const ArmResult& a : r->arms) {
    EXPECT_EQ(a.state, ArmState::kDone);
    EXPECT_NE(a.stop_reason.find("time budget"), std::string::npos) << a.stop_reason;
    EXPECT_GT(a.skipped_steps, 0);
    EXPECT_EQ(static_cast<int>(a.days.size()), a.folds) << "every test day scored";
    // Every fold took exactly its minimum: two steps each.
    EXPECT_EQ(a.tokens / (a.batch * a.context), 2 * a.folds) << a.arm_id;
  }
}

}  // namespace
}  // namespace flashtick
