// Restarts on a stall (training.stall_restarts; research/sweep/stall_restarts.h) on a
// small CPU sweep (two arms, N = 8 and 32, a first fold of 30 epochs of 2 days that early
// stopping ends after a few dozen steps):
//   * a start that stalls is set aside and a fresh one trains the first fold from its
//     step 0; the arm goes on with the start whose best validation loss is lowest, and
//     every start's steps are in the cost;
//   * start 0 is the arm without stall restarts, bit for bit, up to its stall;
//   * an arm cancelled while its second (or third) start trains, or killed between the
//     second start's checkpoint and state.json, resumes it and ends exactly as the
//     uninterrupted one;
//   * the time budget ends a start without a restart, and an arm that never stalls is
//     the arm without stall restarts;
//   * with stall_restart_repeat_tolerance, a start that stalls at an earlier start's loss
//     ends the restarts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <limits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "research/sweep/arm_runner.h"
#include "research/sweep/stall_restarts.h"
#include "research/sweep/sweep_engine.h"
#include "tests/support/tiny_sweep.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

// The engine tests' tiny sweep with early stopping, and `extra` training fields.
SweepConfig Tiny(const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json training = {{"first_fold_epochs", 30},     {"epochs_per_fold", 1},
                             {"checkpoint_every_steps", 3}, {"validation_days", 1},
                             {"validate_every_steps", 2},   {"validation_batches", 2},
                             {"patience", 2}};
  training.update(extra);
  const nlohmann::json j = TinyEngineSweepJson("stall", training);
  auto c = ParseSweepConfig(j.dump());
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

std::string Dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/stall_restarts_" + std::to_string(getpid()) +
                        "_" + name;
  fs::remove_all(d);
  return d;
}

SweepEngineOptions Options(const std::string& dir) {
  SweepEngineOptions o;
  o.dir = dir;
  o.device = "cpu";
  o.python = "";  // no plots
  return o;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void ExpectSameCurve(const std::vector<LossPoint>& a, const std::vector<LossPoint>& b,
                     const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].step, b[k].step) << what << " point " << k;
    EXPECT_EQ(a[k].loss, b[k].loss) << what << " point " << k;
  }
}

// Everything an uninterrupted arm and a resumed one must share, bit for bit on the CPU.
void ExpectSameArms(const SweepOutcome& a, const SweepOutcome& b) {
  ASSERT_EQ(a.arms.size(), b.arms.size());
  for (size_t i = 0; i < a.arms.size(); ++i) {
    const ArmResult &x = a.arms[i], &y = b.arms[i];
    EXPECT_EQ(y.state, ArmState::kDone) << x.arm_id;
    EXPECT_EQ(x.step, y.step) << x.arm_id;
    EXPECT_EQ(x.loss, y.loss) << x.arm_id;
    EXPECT_EQ(x.plain_steps, y.plain_steps) << x.arm_id;
    EXPECT_EQ(x.tokens, y.tokens) << x.arm_id;
    EXPECT_EQ(x.skipped_steps, y.skipped_steps) << x.arm_id;
    EXPECT_EQ(x.stop_reason, y.stop_reason) << x.arm_id;
    EXPECT_EQ(x.restart_choice, y.restart_choice) << x.arm_id;
    EXPECT_EQ(x.stall_restarts_begun, y.stall_restarts_begun) << x.arm_id;
    EXPECT_EQ(x.best_validation_loss, y.best_validation_loss) << x.arm_id;
    ExpectSameCurve(x.loss_curve, y.loss_curve, x.arm_id + " loss curve");
    ExpectSameCurve(x.validation_curve, y.validation_curve, x.arm_id + " validation curve");
    ASSERT_EQ(x.stall_starts.size(), y.stall_starts.size()) << x.arm_id;
    for (size_t s = 0; s < x.stall_starts.size(); ++s) {
      EXPECT_EQ(x.stall_starts[s].index, y.stall_starts[s].index);
      EXPECT_EQ(x.stall_starts[s].steps, y.stall_starts[s].steps);
      EXPECT_EQ(x.stall_starts[s].best_validation_loss, y.stall_starts[s].best_validation_loss);
      ExpectSameCurve(x.stall_starts[s].validation_curve, y.stall_starts[s].validation_curve,
                      x.arm_id + " dropped start's validation curve");
    }
    ASSERT_EQ(x.days.size(), y.days.size()) << x.arm_id;
    for (size_t d = 0; d < x.days.size(); ++d) {
      EXPECT_EQ(x.days[d].daily_return, y.days[d].daily_return) << x.arm_id << " day " << d;
      EXPECT_EQ(x.days[d].metrics.log_loss, y.days[d].metrics.log_loss) << x.arm_id;
    }
  }
  ASSERT_TRUE(a.verdict.has_value() && b.verdict.has_value());
  EXPECT_EQ(a.verdict->Summary(), b.verdict->Summary());
}

// One start as restart_choice lists it.
struct Listed {
  int index = -1;
  int64_t steps = -1;  // the first-fold steps it trained
  std::string ended;
};

// "stall restarts (at most K): start 0 (seed S) stalled at step 34, best 1.03 at step 30;
// start 1 (seed S') ...; kept start J": every start, and J.
std::vector<Listed> ParseChoice(const std::string& choice, int* kept) {
  std::vector<Listed> out;
  static const std::regex start(
      R"(start (\d+) \(seed \d+\) ((?:stalled|stopped by the time budget) at step (\d+)[^,]*|ran its (\d+) planned steps), )");
  for (auto it = std::sregex_iterator(choice.begin(), choice.end(), start);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.push_back({std::stoi(m[1]), std::stoll(m[3].matched ? m[3].str() : m[4].str()), m[2]});
  }
  const size_t at = choice.rfind("; kept start ");
  *kept = at == std::string::npos ? -1 : std::stoi(choice.substr(at + 13));
  return out;
}

// The one rule both kinds of restarts choose by: lowest best validation loss, a start
// without a check last, the earliest on a tie.
TEST(StallRestarts, ChooseStartKeepsTheLowestAndTheEarliestOnATie) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ChooseStart({0.7}), 0u);
  EXPECT_EQ(ChooseStart({kNone, 0.7}), 1u);
  EXPECT_EQ(ChooseStart({0.7, 0.69, 0.69, kNone}), 1u);
  EXPECT_EQ(ChooseStart({0.5, 0.5}), 0u);
  EXPECT_EQ(ChooseStart({kNone, kNone}), 0u);
}

// training.stall_restart_repeat_tolerance: a stalled start repeats an earlier one when its
// best is within the relative tolerance of that start's; +∞ (no check) repeats nothing.
TEST(StallRestarts, RepeatedStartIsWithinTheRelativeTolerance) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  EXPECT_EQ(RepeatedStart(0.51, {0.50}, 0.0), -1);  // off
  EXPECT_EQ(RepeatedStart(0.51, {0.50}, 0.1), 0);
  EXPECT_EQ(RepeatedStart(0.49, {0.50}, 0.1), 0);
  EXPECT_EQ(RepeatedStart(0.56, {0.50}, 0.1), -1);
  EXPECT_EQ(RepeatedStart(0.07, {0.21}, 0.1), -1);  // a start that found a lower basin
  EXPECT_EQ(RepeatedStart(0.69, {0.27, 0.68}, 0.1), 1);
  EXPECT_EQ(RepeatedStart(kNone, {0.5}, 0.1), -1);
  EXPECT_EQ(RepeatedStart(0.5, {kNone, 0.5}, 0.1), 1);
  EXPECT_EQ(RepeatedStart(0.5, {}, 0.1), -1);
}

// The arm runner's question when a start stalls: restart it, or say why not.
TEST(StallRestarts, WhyNoStallRestartCountsAndComparesTheSetAsideStarts) {
  auto start = [](double best) {
    FirstFoldStart s;
    s.best_validation_loss = best;
    s.validation_curve.push_back(LossPoint{});
    return s;
  };
  ArmResult r;
  r.best_validation_loss = 0.69;
  r.validation_curve.push_back(LossPoint{});
  EXPECT_EQ(WhyNoStallRestart(r, 2, 0.1), "");  // the first start stalls: restart
  EXPECT_EQ(WhyNoStallRestart(r, 0, 0.1), "no stall restart left");
  r.stall_restarts_begun = 1;
  r.stall_starts = {start(0.30)};
  EXPECT_EQ(WhyNoStallRestart(r, 2, 0.1), "");  // 0.69 is not 0.30 again
  r.stall_starts.push_back(start(0.68));
  EXPECT_EQ(WhyNoStallRestart(r, 3, 0.1), "start 1's loss again");
  EXPECT_EQ(WhyNoStallRestart(r, 3, 0.0), "");  // the rule is off
  r.stall_restarts_begun = 2;
  EXPECT_EQ(WhyNoStallRestart(r, 2, 0.0), "no stall restart left");  // the count comes first
  r.validation_curve.clear();  // no check yet: +inf repeats nothing
  EXPECT_EQ(WhyNoStallRestart(r, 3, 0.1), "");
}

TEST(StallRestarts, AStalledStartIsRestartedAndTheBestStartKept) {
  auto plain = SweepEngine::Run(Tiny(), Options(Dir("plain")), {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  const std::string dir = Dir("straight");
  auto r = SweepEngine::Run(Tiny({{"stall_restarts", 2}}), Options(dir), {});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto report = nlohmann::json::parse(ReadFile(dir + "/report.json"));
  const std::string md = ReadFile(dir + "/report.md");
  for (size_t i = 0; i < r->arms.size(); ++i) {
    const ArmResult &a = r->arms[i], &b = plain->arms[i];
    std::printf("%s: %s\n  stop: %s\n", a.arm_id.c_str(), a.restart_choice.c_str(),
                a.stop_reason.c_str());
    // The plain arm stalls in its first fold: so does start 0, the same arm.
    ASSERT_NE(b.stop_reason.find("fold 0 early stop"), std::string::npos) << b.stop_reason;
    ASSERT_GE(a.stall_restarts_begun, 1) << a.arm_id;
    int kept = -1;
    const std::vector<Listed> starts = ParseChoice(a.restart_choice, &kept);
    ASSERT_EQ(starts.size(), static_cast<size_t>(a.stall_restarts_begun) + 1) << a.restart_choice;
    ASSERT_EQ(a.restart_choice.rfind("stall restarts (at most 2): start 0 (seed " +
                                         std::to_string(a.seed) + ") stalled at step ", 0),
              0u)
        << a.restart_choice;
    ASSERT_TRUE(kept >= 0 && kept <= a.stall_restarts_begun) << a.restart_choice;
    // Every start but the kept one is in stall_starts, in order, with its curves.
    ASSERT_EQ(a.stall_starts.size(), starts.size() - 1) << a.arm_id;
    std::vector<const FirstFoldStart*> dropped;
    for (const FirstFoldStart& s : a.stall_starts) dropped.push_back(&s);
    std::printf("  kept start %d of %zu\n", kept, starts.size());
    for (size_t k = 0, d = 0; k < starts.size(); ++k) {
      EXPECT_EQ(starts[k].index, static_cast<int>(k));
      if (static_cast<int>(k) == kept) continue;
      ASSERT_LT(d, dropped.size());
      EXPECT_EQ(dropped[d]->index, static_cast<int>(k));
      EXPECT_EQ(dropped[d]->steps, starts[k].steps) << a.restart_choice;
      EXPECT_FALSE(dropped[d]->validation_curve.empty());
      EXPECT_EQ(dropped[d]->loss_curve.size(), static_cast<size_t>(dropped[d]->steps));
      // The kept start's best is the least; an earlier start wins a tie.
      if (static_cast<int>(k) < kept) {
        EXPECT_LT(a.best_validation_loss, dropped[d]->best_validation_loss) << a.arm_id;
      } else {
        EXPECT_LE(a.best_validation_loss, dropped[d]->best_validation_loss) << a.arm_id;
      }
      ++d;
    }
    // Start 0 is the plain arm's first fold, bit for bit, up to its stall.
    const std::vector<LossPoint>& start0 =
        kept == 0 ? a.validation_curve : a.stall_starts.front().validation_curve;
    ExpectSameCurve(start0, b.validation_curve, a.arm_id + " start 0 against the plain arm");
    const int64_t fold0_plan = starts[0].steps + b.skipped_steps;  // the plain arm's stop
    // The kept start's steps, and the plan's: every step of the plan is run or skipped.
    EXPECT_EQ(a.step, b.step) << a.arm_id;
    EXPECT_EQ(a.skipped_steps, fold0_plan - starts[kept].steps) << a.arm_id;
    // Every start's steps are in the cost: the plain arm's and the other starts'.
    int64_t extra = 0;
    for (size_t k = 1; k < starts.size(); ++k) extra += starts[k].steps;
    EXPECT_EQ(a.plain_steps, b.plain_steps + extra) << a.arm_id;
    EXPECT_EQ(a.tokens - b.tokens, extra * (b.tokens / b.plain_steps)) << a.arm_id;
    // The stop reason says what ended each start.
    for (const Listed& s : starts) {
      EXPECT_NE(a.stop_reason.find("fold 0 start " + std::to_string(s.index) + " "),
                std::string::npos)
          << a.stop_reason;
    }
    if (kept == 0) {  // the plain arm goes on: the same test days, bit for bit
      ExpectSameCurve(a.loss_curve, b.loss_curve, a.arm_id + " loss curve");
      ASSERT_EQ(a.days.size(), b.days.size());
      for (size_t d = 0; d < a.days.size(); ++d) {
        EXPECT_EQ(a.days[d].daily_return, b.days[d].daily_return) << a.arm_id;
      }
    }
    // The set-aside starts' checkpoints are gone with the first fold.
    for (const auto& e : fs::directory_iterator(dir + "/arms/" + a.arm_id)) {
      EXPECT_EQ(e.path().filename().string().find("ckpt-f0-start"), std::string::npos)
          << e.path();
    }
    // The report: the choice in report.md, the dropped starts with their curves in report.json.
    EXPECT_NE(md.find("- " + a.arm_id + ": " + a.restart_choice), std::string::npos) << a.arm_id;
    const nlohmann::json& js = report["arms"][i]["stall_starts"];
    ASSERT_EQ(js.size(), a.stall_starts.size()) << a.arm_id;
    EXPECT_EQ(js[0]["validation_curve"].size(), a.stall_starts[0].validation_curve.size());
  }
}

// An arm that never stalls (the floor past the plan's steps) keeps start 0: the arm
// without stall restarts, bit for bit.
TEST(StallRestarts, AnArmThatNeverStallsIsThePlainArm) {
  const nlohmann::json no_stop = {{"early_stop_min_steps", 1000}};
  nlohmann::json with = no_stop;
  with["stall_restarts"] = 1;
  auto plain = SweepEngine::Run(Tiny(no_stop), Options(Dir("never_plain")), {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto r = SweepEngine::Run(Tiny(with), Options(Dir("never")), {});
  ASSERT_TRUE(r.ok()) << r.status();
  for (size_t i = 0; i < r->arms.size(); ++i) {
    const ArmResult &a = r->arms[i], &b = plain->arms[i];
    EXPECT_EQ(a.stall_restarts_begun, 0);
    EXPECT_TRUE(a.stall_starts.empty());
    EXPECT_TRUE(a.stop_reason.empty()) << a.stop_reason;
    EXPECT_NE(a.restart_choice.find("start 0 (seed " + std::to_string(a.seed) + ") ran its "),
              std::string::npos)
        << a.restart_choice;
    EXPECT_EQ(a.plain_steps, b.plain_steps);
    EXPECT_EQ(a.tokens, b.tokens);
    EXPECT_EQ(a.loss, b.loss);
    ExpectSameCurve(a.loss_curve, b.loss_curve, a.arm_id + " loss curve");
    ExpectSameCurve(a.validation_curve, b.validation_curve, a.arm_id + " validation curve");
    ASSERT_EQ(a.days.size(), b.days.size());
    for (size_t d = 0; d < a.days.size(); ++d) {
      EXPECT_EQ(a.days[d].daily_return, b.days[d].daily_return) << a.arm_id << " day " << d;
    }
  }
}

// With a repeat tolerance that any two starts meet (1: within 100%), the second start's
// stall ends the fold: two starts, not three, and the two are the ones the arm without
// the tolerance trains first, bit for bit.
TEST(StallRestarts, AStartThatRepeatsAnEarlierOneEndsTheRestarts) {
  auto three = SweepEngine::Run(Tiny({{"stall_restarts", 2}}), Options(Dir("repeat_off")), {});
  ASSERT_TRUE(three.ok()) << three.status();
  auto two = SweepEngine::Run(
      Tiny({{"stall_restarts", 2}, {"stall_restart_repeat_tolerance", 1.0}}),
      Options(Dir("repeat_on")), {});
  ASSERT_TRUE(two.ok()) << two.status();
  for (size_t i = 0; i < two->arms.size(); ++i) {
    const ArmResult &a = two->arms[i], &b = three->arms[i];
    std::printf("%s: %s\n  stop: %s\n", a.arm_id.c_str(), a.restart_choice.c_str(),
                a.stop_reason.c_str());
    ASSERT_EQ(b.stall_restarts_begun, 2) << b.arm_id;
    ASSERT_EQ(a.stall_restarts_begun, 1) << a.arm_id << ": " << a.restart_choice;
    int kept_a = -1, kept_b = -1;
    const std::vector<Listed> sa = ParseChoice(a.restart_choice, &kept_a);
    const std::vector<Listed> sb = ParseChoice(b.restart_choice, &kept_b);
    ASSERT_EQ(sa.size(), 2u) << a.restart_choice;
    ASSERT_EQ(sb.size(), 3u) << b.restart_choice;
    EXPECT_EQ(sa[0].steps, sb[0].steps);
    EXPECT_EQ(sa[1].steps, sb[1].steps);
    EXPECT_EQ(sa[1].ended, "stalled at step " + std::to_string(sa[1].steps) +
                               " (start 0's loss again)");
    EXPECT_NE(a.stop_reason.find("fold 0 start 1 early stop"), std::string::npos) << a.stop_reason;
    EXPECT_NE(a.stop_reason.find("start 0's loss again"), std::string::npos) << a.stop_reason;
    EXPECT_EQ(a.stop_reason.find("no stall restart left"), std::string::npos) << a.stop_reason;
    // The third start's steps are not in the cost.
    EXPECT_EQ(a.plain_steps, b.plain_steps - sb[2].steps) << a.arm_id;
  }
}

// Cancels arm `arm` once start `start` of its first fold (counted from where this call
// picks the arm up) has reached step `step`: a fresh start's steps go back to 1.
absl::StatusOr<SweepOutcome> CancelInStart(const SweepConfig& c, const std::string& dir, int arm,
                                           int start, int64_t step) {
  std::atomic<bool> cancel{false};
  std::mutex mu;
  int64_t last = 0;
  int began = 0;
  SweepHooks hooks;
  hooks.cancel = &cancel;
  hooks.on_progress = [&](const SweepEvent& e) {
    if (e.arm.arm_index != arm || e.arm.phase != "train") return;
    std::lock_guard<std::mutex> lock(mu);
    if (e.arm.step < last) ++began;
    last = e.arm.step;
    if (began >= start && e.arm.step >= step) cancel = true;
  };
  return SweepEngine::Run(c, Options(dir), hooks);
}

// Two stall restarts: n8 keeps its last start (the trainer in hand), n32 its second,
// set aside (the trainer from its checkpoint, written by the call before the cancel).
TEST(StallRestarts, CancelledInALaterStartResumesExactly) {
  const SweepConfig c = Tiny({{"stall_restarts", 2}});
  auto straight = SweepEngine::Run(c, Options(Dir("resume_straight")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  for (const ArmResult& a : straight->arms) {
    ASSERT_EQ(a.stall_restarts_begun, 2) << a.arm_id;
    std::printf("%s: %s\n", a.arm_id.c_str(), a.restart_choice.c_str());
  }
  for (const auto& [arm, start] : {std::pair{0, 1}, {1, 1}, {1, 2}}) {
    const std::string dir = Dir("resume_cancel_" + std::to_string(arm) + std::to_string(start));
    auto partial = CancelInStart(c, dir, arm, start, 5);
    ASSERT_TRUE(partial.ok()) << partial.status();
    ASSERT_TRUE(partial->cancelled);
    const ArmResult& p = partial->arms[arm];
    ASSERT_EQ(p.state, ArmState::kCancelled);
    // Stopped inside that start, the earlier ones set aside: their summaries in
    // state.json, their trainers beside ckpt-f0.
    const std::string arm_dir = dir + "/arms/" + p.arm_id;
    auto saved = ArmRunner::LoadState(arm_dir);
    ASSERT_TRUE(saved.ok()) << saved.status();
    EXPECT_EQ(saved->stall_restarts_begun, start);
    ASSERT_EQ(saved->stall_starts.size(), static_cast<size_t>(start));
    for (int k = 0; k < start; ++k) {
      EXPECT_EQ(saved->stall_starts[k].index, k);
      EXPECT_TRUE(fs::exists(arm_dir + "/ckpt-f0-start" + std::to_string(k) + "/manifest.json"));
    }
    EXPECT_TRUE(saved->restart_choice.empty());
    EXPECT_GE(saved->step, 5);
    EXPECT_LT(saved->step, 20);
    auto resumed = SweepEngine::Run(c, Options(dir), {});
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    ExpectSameArms(*straight, *resumed);
    EXPECT_FALSE(fs::exists(arm_dir + "/ckpt-f0-start0"));
  }
  // Cancelled in start 0, before any stall: the same again.
  auto early = CancelInStart(c, Dir("resume_cancel_start0"), 1, 0, 4);
  ASSERT_TRUE(early.ok()) << early.status();
  ASSERT_TRUE(early->cancelled);
  auto resumed = SweepEngine::Run(c, Options(Dir("resume_cancel_start0")), {});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameArms(*straight, *resumed);
}

// A kill after the second start's checkpoint is published and before state.json is
// rewritten leaves a checkpoint whose step (start 1's) is below state.json's (start 0's
// step, late in its first fold): the checkpoint is still the newer save, and the arm
// resumes from it.
TEST(StallRestarts, AKillBetweenTheSecondStartsCheckpointAndStateJsonResumesExactly) {
  const SweepConfig c = Tiny({{"stall_restarts", 1}});
  auto straight = SweepEngine::Run(c, Options(Dir("window_straight")), {});
  ASSERT_TRUE(straight.ok()) << straight.status();
  const ArmResult& s = straight->arms[1];
  int kept = -1;
  const std::vector<Listed> starts = ParseChoice(s.restart_choice, &kept);
  ASSERT_FALSE(starts.empty());
  const int64_t start0 = starts[0].steps;
  ASSERT_GT(start0, 8);
  const std::string dir = Dir("window");
  const std::string arm = dir + "/arms/" + s.arm_id;
  // state.json late in start 0 ...
  auto first = CancelInStart(c, dir, 1, 0, start0 - 2);
  ASSERT_TRUE(first.ok()) << first.status();
  nlohmann::json older = nlohmann::json::parse(ReadFile(arm + "/state.json"));
  ASSERT_EQ(older["stall_restarts_begun"], 0);
  ASSERT_GE(older["step"].get<int64_t>(), start0 - 2);
  older["state"] = "running";
  // ... the checkpoint early in start 1.
  auto second = CancelInStart(c, dir, 1, 1, 3);
  ASSERT_TRUE(second.ok()) << second.status();
  const auto manifest = nlohmann::json::parse(ReadFile(arm + "/ckpt-f0/manifest.json"));
  const nlohmann::json& attached = manifest["attachment"]["arm_state"];
  ASSERT_EQ(attached["stall_restarts_begun"], 1);
  ASSERT_LT(attached["step"].get<int64_t>(), older["step"].get<int64_t>());
  std::ofstream(arm + "/state.json", std::ios::trunc) << older.dump(1);
  auto resumed = SweepEngine::Run(c, Options(dir), {});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ExpectSameArms(*straight, *resumed);
}

// The time budget ends a start without a restart: it covers every start.
TEST(StallRestarts, TheTimeBudgetEndsTheFoldWithoutARestart) {
  auto r = SweepEngine::Run(Tiny({{"stall_restarts", 1},
                                  {"min_steps_per_fold", 4},
                                  {"max_train_seconds", 1e-9}}),
                            Options(Dir("budget")), {});
  ASSERT_TRUE(r.ok()) << r.status();
  for (const ArmResult& a : r->arms) {
    EXPECT_EQ(a.stall_restarts_begun, 0) << a.arm_id;
    EXPECT_TRUE(a.stall_starts.empty()) << a.arm_id;
    EXPECT_NE(a.stop_reason.find("fold 0 start 0 time budget"), std::string::npos) << a.stop_reason;
    EXPECT_NE(a.restart_choice.find("start 0 (seed " + std::to_string(a.seed) +
                                    ") stopped by the time budget at step 4"),
              std::string::npos)
        << a.restart_choice;
    EXPECT_EQ(a.restart_choice.substr(a.restart_choice.size() - 14), "; kept start 0");
  }
}

}  // namespace
}  // namespace flashtick
