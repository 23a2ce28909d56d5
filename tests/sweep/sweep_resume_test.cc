// Resume and cancel of the sweep engine (research/sweep/sweep_engine.h) on a small
// CPU sweep (two arms, N = 8 and 32):
//   * a crash: a child process runs the sweep and is SIGKILLed while the second
//     arm trains (no chance to save anything); the sweep run again on the same
//     directory resumes from the last checkpoint and ends with exactly the daily
//     returns, verdict, final loss and step counts of an uninterrupted run; the
//     kill's worst moment, between the trainer checkpoint and state.json, is also
//     built deterministically (AKillBetweenCheckpointAndStateJson*);
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
#include <vector>

#include <nlohmann/json.hpp>

#include "research/sweep/arm_runner.h"
#include "research/sweep/sweep_engine.h"
#include "tests/support/tiny_sweep.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

nlohmann::json TinyJson(nlohmann::json training = {{"first_fold_epochs", 3},
                                                    {"epochs_per_fold", 1},
                                                    {"checkpoint_every_steps", 4}}) {
  return TinyEngineSweepJson("resume", std::move(training));
}

SweepConfig Parse(const nlohmann::json& j) {
  auto c = ParseSweepConfig(j.dump());
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

SweepConfig Tiny(nlohmann::json training = {{"first_fold_epochs", 3},
                                            {"epochs_per_fold", 1},
                                            {"checkpoint_every_steps", 4}}) {
  return Parse(TinyJson(std::move(training)));
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
    // The counters resume with the trainer (the newer of the checkpoint's arm state and
    // state.json, docs/research/sweeps.md "Resume"): each step counted once, none lost.
    EXPECT_EQ(a.arms[i].plain_steps, b.arms[i].plain_steps) << a.arms[i].arm_id;
    EXPECT_EQ(a.arms[i].refresh_steps, b.arms[i].refresh_steps) << a.arms[i].arm_id;
    EXPECT_EQ(a.arms[i].tokens, b.arms[i].tokens) << a.arms[i].arm_id;
    EXPECT_EQ(a.arms[i].skipped_steps, b.arms[i].skipped_steps) << a.arms[i].arm_id;
    EXPECT_EQ(a.arms[i].evaluated_folds, b.arms[i].evaluated_folds) << a.arms[i].arm_id;
    // Under 1,000 steps the loss curve has a point per step: the same points, bit for bit.
    ASSERT_EQ(a.arms[i].loss_curve.size(), b.arms[i].loss_curve.size()) << a.arms[i].arm_id;
    for (size_t k = 0; k < a.arms[i].loss_curve.size(); ++k) {
      EXPECT_EQ(a.arms[i].loss_curve[k].step, b.arms[i].loss_curve[k].step) << a.arms[i].arm_id;
      EXPECT_EQ(a.arms[i].loss_curve[k].loss, b.arms[i].loss_curve[k].loss) << a.arms[i].arm_id;
    }
    EXPECT_EQ(a.arms[i].validation_curve.size(), b.arms[i].validation_curve.size()) << a.arms[i].arm_id;
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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The cells of arm `arm_id`'s row in report.md's cost and benefit table.
std::vector<std::string> CostRow(const std::string& md, const std::string& arm_id) {
  const size_t at = md.find("\n| " + arm_id + " | ");
  if (at == std::string::npos) return {};
  const std::string line = md.substr(at + 1, md.find('\n', at + 1) - at - 1);
  std::vector<std::string> cells;
  for (size_t b = 1, e; (e = line.find(" |", b)) != std::string::npos; b = e + 2) {
    cells.push_back(line.substr(b + 1, e - b - 1));
  }
  return cells;  // arm, N, state, steps, s/epoch, plain step, refresh step, ...
}

// Every arm's validation checks are in report.json, in order, and there are some.
void ExpectValidationCurveReported(const SweepOutcome& o, const std::string& dir) {
  const auto report = nlohmann::json::parse(ReadFile(dir + "/report.json"));
  ASSERT_EQ(report["arms"].size(), o.arms.size());
  for (size_t i = 0; i < o.arms.size(); ++i) {
    const ArmResult& a = o.arms[i];
    const nlohmann::json& v = report["arms"][i]["validation_curve"];
    ASSERT_TRUE(v.is_array()) << report["arms"][i].dump();
    EXPECT_FALSE(v.empty()) << a.arm_id;
    ASSERT_EQ(v.size(), a.validation_curve.size()) << a.arm_id;
    for (size_t k = 0; k < v.size(); ++k) {
      EXPECT_EQ(v[k][0].get<int64_t>(), a.validation_curve[k].step) << a.arm_id;
      EXPECT_DOUBLE_EQ(v[k][1].get<double>(), a.validation_curve[k].loss) << a.arm_id;
    }
  }
}

// The step-kind cost of every arm, in the result, report.json and report.md: `refresh`
// says whether the arm refreshed a Hessian (Sophia-H) or not (AdamW).
void ExpectStepKindCost(const SweepOutcome& o, const std::string& dir, bool refresh) {
  const auto report = nlohmann::json::parse(ReadFile(dir + "/report.json"));
  const std::string md = ReadFile(dir + "/report.md");
  EXPECT_NE(md.find("| s/epoch | plain step | refresh step |"), std::string::npos);
  ASSERT_EQ(report["arms"].size(), o.arms.size());
  for (size_t i = 0; i < o.arms.size(); ++i) {
    const ArmResult& a = o.arms[i];
    // No early stop here: every planned step ran, each of one kind.
    EXPECT_EQ(a.plain_steps + a.refresh_steps, a.total_steps) << a.arm_id;
    EXPECT_EQ(refresh, a.refresh_steps > 0) << a.arm_id;
    EXPECT_GT(a.plain_steps, 0) << a.arm_id;
    EXPECT_GT(a.plain_step_seconds, 0) << a.arm_id;
    EXPECT_NEAR(a.plain_step_seconds + a.refresh_step_seconds, a.train_seconds,
                1e-9 * a.train_seconds) << a.arm_id;
    const nlohmann::json& c = report["arms"][i]["cost"];
    EXPECT_EQ(c["plain_steps"], a.plain_steps);
    EXPECT_EQ(c["refresh_steps"], a.refresh_steps);
    ASSERT_TRUE(c["mean_plain_step_ms"].is_number()) << c.dump();
    EXPECT_DOUBLE_EQ(c["mean_plain_step_ms"].get<double>(), 1e3 * a.plain_step_seconds / a.plain_steps);
    const std::vector<std::string> row = CostRow(md, a.arm_id);
    ASSERT_GT(row.size(), 6u) << a.arm_id << " has no row in report.md";
    EXPECT_NE(row[5].find(" ms"), std::string::npos) << row[5];
    if (refresh) {
      ASSERT_TRUE(c["mean_refresh_step_ms"].is_number()) << c.dump();
      EXPECT_GT(c["mean_refresh_step_ms"].get<double>(), 0);
      EXPECT_NE(row[6].find(" ms ×" + std::to_string(a.refresh_steps)), std::string::npos) << row[6];
    } else {
      EXPECT_EQ(a.refresh_step_seconds, 0) << a.arm_id;
      EXPECT_TRUE(c["mean_refresh_step_ms"].is_null()) << c.dump();
      EXPECT_EQ(row[6], "—") << a.arm_id;
    }
    std::printf("%s: %lld plain steps of %.2f ms, %lld refresh steps of %.2f ms\n",
                a.arm_id.c_str(), static_cast<long long>(a.plain_steps),
                1e3 * a.mean_plain_step_seconds(), static_cast<long long>(a.refresh_steps),
                1e3 * a.mean_refresh_step_seconds());
  }
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
  ExpectStepKindCost(*straight, straight_dir, /*refresh=*/false);  // AdamW
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
  // What the sweep cost is both calls (sweep_clock.h): the killed one counts up to its
  // last heartbeat, so at least its first write, and the report says so.
  EXPECT_EQ(straight->calls, 1);
  EXPECT_EQ(resumed->calls, 2);
  EXPECT_GT(resumed->wall_seconds, resumed->call_seconds);
  std::ifstream resumed_md_file(dir + "/report.md");
  const std::string resumed_md((std::istreambuf_iterator<char>(resumed_md_file)),
                               std::istreambuf_iterator<char>());
  EXPECT_NE(resumed_md.find(" s wall-clock over 2 calls (this call "), std::string::npos);
  EXPECT_EQ(md.find(" calls (this call "), std::string::npos) << "one call: no split";
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

// Runs `c` in `dir` until arm `arm` reaches step `step` and cancels: the arm saves a
// checkpoint at that step and stops.
absl::StatusOr<SweepOutcome> CancelAt(const SweepConfig& c, const std::string& dir, int arm,
                                      int64_t step) {
  std::atomic<bool> cancel{false};
  SweepHooks hooks;
  hooks.cancel = &cancel;
  hooks.on_progress = [&](const SweepEvent& e) {
    if (e.arm.arm_index == arm && e.arm.step >= step) cancel = true;
  };
  return SweepEngine::Run(c, Options(dir), hooks);
}

// Runs `c` in `dir` until arm `arm` reaches step `step`, cancels, then resumes it to
// the end and returns the resumed outcome.
absl::StatusOr<SweepOutcome> CancelThenResume(const SweepConfig& c, const std::string& dir,
                                              int arm, int64_t step) {
  auto partial = CancelAt(c, dir, arm, step);
  if (!partial.ok()) return partial.status();
  return SweepEngine::Run(c, Options(dir), {});
}

// Early stopping (sweep_config.h): validation on a held-out day, a stop that skips the
// plan's remaining steps, and a cancel + resume through it ending exactly as a straight
// run does.
TEST(SweepResume, EarlyStoppingResumesExactly) {
  const SweepConfig c = Tiny(EarlyStopping());
  const std::string straight_dir = Dir("early_straight");
  auto straight = SweepEngine::Run(c, Options(straight_dir), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  ExpectValidationCurveReported(*straight, straight_dir);
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
// training.restarts: k starts of the first fold, the one with the lowest best validation
// loss kept. Every start's steps are in the cost, the plan's steps are not moved, and the
// kept start's checks are the validation curve's first ones.
TEST(SweepResume, RestartsKeepTheBestStartAndCountEveryStart) {
  const nlohmann::json no_stop = {{"early_stop_min_steps", 1000}};  // every planned step runs
  nlohmann::json with = no_stop;
  with.update({{"restarts", 3}, {"restart_steps", 6}});
  const SweepConfig plain = Tiny(EarlyStopping(no_stop));
  const SweepConfig restarted = Tiny(EarlyStopping(with));
  auto p = SweepEngine::Run(plain, Options(Dir("restarts_plain")), {});
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string dir = Dir("restarts");
  auto r = SweepEngine::Run(restarted, Options(dir), {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(p->arms.size(), r->arms.size());
  const std::string md = ReadFile(dir + "/report.md");
  EXPECT_NE(md.find("Restarts of the first fold"), std::string::npos);
  for (size_t i = 0; i < r->arms.size(); ++i) {
    const ArmResult &a = r->arms[i], &b = p->arms[i];
    EXPECT_TRUE(b.restart_choice.empty()) << b.restart_choice;
    const std::string head = "3 starts of 6 steps; kept start ";
    ASSERT_EQ(a.restart_choice.rfind(head, 0), 0u) << a.restart_choice;
    const int kept = a.restart_choice[head.size()] - '0';
    ASSERT_TRUE(kept >= 0 && kept < 3) << a.restart_choice;
    EXPECT_NE(md.find("- " + a.arm_id + ": " + a.restart_choice), std::string::npos) << a.arm_id;
    // The two dropped starts' 12 steps are in the cost; the plan's steps are the same.
    EXPECT_EQ(a.step, b.step) << a.arm_id;
    EXPECT_EQ(a.plain_steps + a.refresh_steps, b.plain_steps + b.refresh_steps + 12) << a.arm_id;
    EXPECT_EQ(a.tokens - b.tokens, 12 * (b.tokens / (b.plain_steps + b.refresh_steps))) << a.arm_id;
    // Each start's best, as listed, and the kept one is the least of them.
    const std::string list = a.restart_choice.substr(a.restart_choice.find(": ") + 2);
    std::vector<double> bests;
    for (size_t at = 0; at != std::string::npos;) {
      const size_t comma = list.find(", ", at);
      bests.push_back(std::stod(list.substr(at, comma == std::string::npos ? comma : comma - at)));
      at = comma == std::string::npos ? comma : comma + 2;
    }
    ASSERT_EQ(bests.size(), 3u) << a.restart_choice;
    for (double v : bests) EXPECT_LE(bests[kept], v) << a.restart_choice;
    // The kept start's checks (steps 2, 4, 6) open the validation curve, its best among them.
    ASSERT_GE(a.validation_curve.size(), 3u) << a.arm_id;
    double first_best = a.validation_curve[0].loss;
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(a.validation_curve[k].step, 2 * (k + 1)) << a.arm_id;
      first_best = std::min(first_best, a.validation_curve[k].loss);
    }
    EXPECT_NEAR(first_best, bests[kept], 1e-3 * std::abs(first_best) + 1e-9) << a.restart_choice;
    // Start 0 is the arm's own initialisation: kept, its checks are the plain arm's.
    if (kept == 0) {
      EXPECT_EQ(a.validation_curve[0].loss, b.validation_curve[0].loss) << a.arm_id;
    } else {
      EXPECT_NE(a.validation_curve[0].loss, b.validation_curve[0].loss) << a.arm_id;
    }
    std::printf("%s: %s\n", a.arm_id.c_str(), a.restart_choice.c_str());
  }
}

// A cancel inside the starts keeps none of them (the resume runs them again); a cancel
// after them resumes the kept start from its checkpoint. Both end as a straight run.
TEST(SweepResume, RestartsResumeExactly) {
  const SweepConfig c = Tiny(EarlyStopping({{"restarts", 3}, {"restart_steps", 6}}));
  auto straight = SweepEngine::Run(c, Options(Dir("restarts_straight")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  for (const int64_t at : {int64_t{4}, int64_t{9}}) {  // inside start 0; after the starts
    auto resumed = CancelThenResume(c, Dir("restarts_cancel_" + std::to_string(at)), 0, at);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    ExpectSameResults(*straight, *resumed);
    for (size_t i = 0; i < straight->arms.size(); ++i) {
      EXPECT_EQ(straight->arms[i].restart_choice, resumed->arms[i].restart_choice) << at;
    }
  }
}

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

// Sophia-H: every hessian_interval-th step refreshes the Hessian (an HVP step). The
// arm counts and times both kinds over every fold; the counts go through state.json
// (one written before they existed still loads, with 0) into report.json and report.md.
TEST(SweepResume, SophiaHRefreshStepsAreCountedAndReported) {
  nlohmann::json j = TinyJson();
  j["optimizer"]["name"] = "sophia_h";
  j["optimizer"]["hessian_interval"] = 3;
  const SweepConfig c = Parse(j);
  ASSERT_TRUE(c.warm_start);  // one trainer over every fold: its step is the plan's step
  const std::string dir = Dir("sophia");
  auto r = SweepEngine::Run(c, Options(dir), {});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectStepKindCost(*r, dir, /*refresh=*/true);
  for (const ArmResult& a : r->arms) {
    // The trainer refreshes at its steps 1, 4, 7, ...: ceil(steps / 3) of them.
    EXPECT_EQ(a.refresh_steps, (a.total_steps + 2) / 3) << a.arm_id;
    // state.json holds them; without them (an older state file) it loads with 0.
    auto state = nlohmann::json::parse(ReadFile(dir + "/arms/" + a.arm_id + "/state.json"));
    EXPECT_EQ(state["plain_steps"], a.plain_steps);
    EXPECT_EQ(state["refresh_steps"], a.refresh_steps);
    EXPECT_EQ(state["refresh_step_seconds"], a.refresh_step_seconds);
    auto loaded = ArmResultFromJson(state);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->refresh_steps, a.refresh_steps);
    EXPECT_EQ(loaded->plain_step_seconds, a.plain_step_seconds);
    for (const char* key : {"plain_steps", "plain_step_seconds", "refresh_steps", "refresh_step_seconds"}) {
      state.erase(key);
    }
    auto old = ArmResultFromJson(state);
    ASSERT_TRUE(old.ok()) << old.status();
    EXPECT_EQ(old->plain_steps, 0);
    EXPECT_EQ(old->refresh_steps, 0);
    EXPECT_EQ(old->mean_refresh_step_seconds(), 0);
    state["refresh_steps"] = "many";  // present, the wrong type: refused
    EXPECT_FALSE(ArmResultFromJson(state).ok());
  }
  // Cancelled part way through the second arm and resumed: the same counts.
  auto resumed = CancelThenResume(c, Dir("sophia_cancelled"), /*arm=*/1, /*step=*/5);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameResults(*r, *resumed);
}

// The window the kill test above can only hit by chance, built deterministically in
// `dir`: a kill after the trainer checkpoint of step `to` is published and before
// state.json is rewritten leaves that checkpoint (in `ckpt`) beside the state.json of
// the previous save, here the one of step `from` (the same fold: nothing scored in
// between, as between two checkpoints of a real run). Sets *older to that state.json.
void BuildKillWindow(const SweepConfig& c, const std::string& dir, const std::string& arm_id,
                     int64_t from, int64_t to, const std::string& ckpt, nlohmann::json* older) {
  const std::string arm = dir + "/arms/" + arm_id;
  auto first = CancelAt(c, dir, /*arm=*/1, from);
  ASSERT_TRUE(first.ok()) << first.status();
  *older = nlohmann::json::parse(ReadFile(arm + "/state.json"));
  ASSERT_EQ((*older)["step"], from);
  (*older)["state"] = "running";  // as the periodic save before the kill wrote it
  auto second = CancelAt(c, dir, /*arm=*/1, to);
  ASSERT_TRUE(second.ok()) << second.status();
  // The checkpoint's arm state is what state.json got from the same save.
  const auto manifest = nlohmann::json::parse(ReadFile(arm + "/" + ckpt + "/manifest.json"));
  const nlohmann::json& attached = manifest["attachment"]["arm_state"];
  const auto newer = nlohmann::json::parse(ReadFile(arm + "/state.json"));
  ASSERT_EQ(attached["step"], to);
  for (const char* key : {"step", "tokens", "plain_steps", "refresh_steps", "train_seconds",
                          "refresh_step_seconds", "loss_curve", "evaluated_folds"}) {
    EXPECT_EQ(attached[key], newer[key]) << key;
  }
  ASSERT_EQ((*older)["evaluated_folds"], attached["evaluated_folds"])
      << "steps " << from << " and " << to << " should lie in the same fold";
  ASSERT_LT((*older)["tokens"].get<int64_t>(), attached["tokens"].get<int64_t>());
  // The kill: the checkpoint of step `to` is on disk, state.json is still step `from`'s.
  std::ofstream(arm + "/state.json", std::ios::trunc) << older->dump(1);
  ASSERT_EQ(StepOnDisk(arm), from);
}

nlohmann::json SophiaH(nlohmann::json j) {
  j["optimizer"]["name"] = "sophia_h";
  j["optimizer"]["hessian_interval"] = 3;
  return j;
}

// With warm start (one trainer, ckpt-f0, over every fold): killed in that window, the
// arm resumes with the checkpoint's counts (step 10), not state.json's (step 5), and
// ends with every step counted once, as in an uninterrupted run (Sophia-H: both kinds).
TEST(SweepResume, AKillBetweenCheckpointAndStateJsonResumesWithExactCounts) {
  // A first fold of 6 epochs, so steps 5 and 10 both lie in it.
  const SweepConfig c = Parse(SophiaH(TinyJson({{"first_fold_epochs", 6},
                                                {"epochs_per_fold", 1},
                                                {"checkpoint_every_steps", 4}})));
  ASSERT_TRUE(c.warm_start);
  auto straight = SweepEngine::Run(c, Options(Dir("window_straight")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  const std::string arm_id = straight->arms[1].arm_id;

  const std::string dir = Dir("window");
  nlohmann::json older;
  ASSERT_NO_FATAL_FAILURE(BuildKillWindow(c, dir, arm_id, 5, 10, "ckpt-f0", &older));
  auto resumed = SweepEngine::Run(c, Options(dir), {});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameResults(*straight, *resumed);
  for (const ArmResult& a : resumed->arms) {
    EXPECT_EQ(a.plain_steps + a.refresh_steps, a.total_steps) << a.arm_id;
    EXPECT_EQ(a.refresh_steps, (a.total_steps + 2) / 3) << a.arm_id;
  }

  // A checkpoint ahead of a state.json it cannot continue (here one that claims a fold
  // scored the checkpoint has not reached) fails the arm rather than mixing the two.
  const std::string mixed = Dir("window_mixed");
  ASSERT_NO_FATAL_FAILURE(BuildKillWindow(c, mixed, arm_id, 5, 10, "ckpt-f0", &older));
  older["evaluated_folds"] = 1;
  std::ofstream(mixed + "/arms/" + arm_id + "/state.json", std::ios::trunc) << older.dump(1);
  auto refused = SweepEngine::Run(c, Options(mixed), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsDataLoss(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("does not continue"), std::string::npos)
      << refused.status();
}

// Without warm start (a fresh trainer per fold, ckpt-f<k>): the same window in a later
// fold, whose checkpoint is ckpt-f1, resumes as exactly.
TEST(SweepResume, AKillBetweenCheckpointAndStateJsonInALaterFoldWithoutWarmStart) {
  nlohmann::json j = SophiaH(TinyJson());
  j["walk_forward"]["warm_start"] = false;
  const SweepConfig c = Parse(j);
  ASSERT_FALSE(c.warm_start);
  auto straight = SweepEngine::Run(c, Options(Dir("window_cold_straight")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  const std::string dir = Dir("window_cold");
  nlohmann::json older;
  // Steps 10 and 11 lie in the second fold.
  ASSERT_NO_FATAL_FAILURE(
      BuildKillWindow(c, dir, straight->arms[1].arm_id, 10, 11, "ckpt-f1", &older));
  EXPECT_EQ(older["evaluated_folds"], 1);
  auto resumed = SweepEngine::Run(c, Options(dir), {});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameResults(*straight, *resumed);
  for (const ArmResult& a : resumed->arms) {
    EXPECT_EQ(a.plain_steps + a.refresh_steps, a.total_steps) << a.arm_id;
    EXPECT_GT(a.refresh_steps, 0) << a.arm_id;
  }
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
