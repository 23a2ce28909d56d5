// ArmResult's JSON (research/sweep/arm_result.h): written and read from one field
// table, so every field survives the round trip, and a state file with a field of the
// wrong type is refused naming the field, whether that field is one every state file
// has or one added later (which may be absent: it then loads as its default).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "research/sweep/arm_result.h"

namespace flashtick {
namespace {

ArmResult EveryFieldSet() {
  ArmResult a;
  a.arm_id = "n512-s2";
  a.context = 512;
  a.seed = 2;
  a.state = ArmState::kDone;
  a.error = "none";
  a.folds = 3;
  a.evaluated_folds = 2;
  a.step = 40;
  a.total_steps = 41;
  a.batch = 64;
  a.loss = 0.75;
  a.train_seconds = 12.5;
  a.eval_seconds = 1.25;
  a.tokens = 123456;
  a.train_samples = 999;
  a.peak_memory_bytes = 1 << 20;
  a.parameters = 4321;
  a.kernel_path = "cpu_reference";
  a.plain_steps = 30;
  a.refresh_steps = 11;
  a.plain_step_seconds = 3.5;
  a.refresh_step_seconds = 7.25;
  a.backend = "cpu";
  a.ran_on = "host h";
  DayResult d;
  d.day = 5;
  d.date = "2024-01-05";
  d.fold = 1;
  d.metrics.samples = 100;
  d.metrics.accuracy = 0.5;
  d.metrics.log_loss = 1.0;
  d.daily_return = 0.01;
  d.gross = 0.02;
  d.trades = 7;
  a.days.push_back(d);
  EventTally e;
  e.lag = 300;
  e.events = 10;
  e.hits = 6;
  e.calls = 8;
  e.call_hits = 5;
  a.events.push_back(e);
  a.loss_curve.push_back({1, 1.1});
  a.skipped_steps = 3;
  a.stop_reason = "early stop";
  a.validation_curve.push_back({10, 0.9});
  a.best_validation_loss = 0.9;
  a.best_validation_step = 10;
  return a;
}

TEST(ArmResultJson, EveryFieldRoundTrips) {
  const nlohmann::json j = ArmResultToJson(EveryFieldSet());
  auto back = ArmResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ArmResultToJson(*back), j);
  EXPECT_EQ(back->ran_on, "host h");
  EXPECT_EQ(back->best_validation_step, 10);
  EXPECT_EQ(back->days.at(0).trades, 7);
  EXPECT_EQ(back->events.at(0).call_hits, 5);
}

TEST(ArmResultJson, AWrongTypeIsRefusedNamingTheField) {
  const nlohmann::json j = ArmResultToJson(EveryFieldSet());
  int scalars = 0;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_structured()) continue;
    ++scalars;
    nlohmann::json bad = j;
    bad[it.key()] = nlohmann::json::object();
    auto r = ArmResultFromJson(bad);
    ASSERT_FALSE(r.ok()) << it.key();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << it.key();
    EXPECT_NE(r.status().message().find(it.key()), std::string::npos) << r.status();
  }
  EXPECT_GE(scalars, 28);
  nlohmann::json bad_day = j;
  bad_day["days"][0]["trades"] = "seven";
  auto r = ArmResultFromJson(bad_day);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("days[].trades"), std::string::npos) << r.status();
}

TEST(ArmResultJson, FieldsAddedLaterMayBeAbsentTheFirstOnesMayNot) {
  const nlohmann::json j = ArmResultToJson(EveryFieldSet());
  for (const char* later : {"ran_on", "plain_steps", "refresh_step_seconds", "skipped_steps",
                            "stop_reason", "best_validation_loss", "best_validation_step"}) {
    nlohmann::json old = j;
    old.erase(later);
    EXPECT_TRUE(ArmResultFromJson(old).ok()) << later;
  }
  for (const char* first : {"arm_id", "context", "seed", "step", "loss", "kernel_path", "state"}) {
    nlohmann::json broken = j;
    broken.erase(first);
    auto r = ArmResultFromJson(broken);
    ASSERT_FALSE(r.ok()) << first;
    EXPECT_NE(r.status().message().find(first), std::string::npos) << r.status();
  }
  nlohmann::json old_event = j;
  old_event["events"][0].erase("calls");
  auto r = ArmResultFromJson(old_event);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->events.at(0).calls, 0);
}

// training.stall_restarts: the first fold's other starts, with their curves, survive
// state.json (a resumed arm chooses among them); an ordinary arm's state has no such key.
TEST(ArmResultJson, StallStartsRoundTripAndAreAbsentWithoutThem) {
  ArmResult a = EveryFieldSet();
  EXPECT_FALSE(ArmResultToJson(a).contains("stall_starts"));
  a.stall_restarts_begun = 2;
  a.restart_choice = "stall restarts (at most 2): ...; kept start 2";
  for (int k : {0, 1}) {
    FirstFoldStart s;
    s.index = k;
    s.seed = 7 + k;
    s.steps = 30 + k;
    s.ended = "stalled at step " + std::to_string(30 + k);
    s.loss = 0.5 + k;
    s.best_validation_loss = 0.25 + k;
    s.best_validation_step = 20;
    s.loss_curve = {{1, 1.5}, {2, 1.25}};
    s.validation_curve = {{2, 0.75}, {4, 0.25 + k}};
    a.stall_starts.push_back(s);
  }
  const nlohmann::json j = ArmResultToJson(a);
  auto back = ArmResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ArmResultToJson(*back), j);
  EXPECT_EQ(back->stall_restarts_begun, 2);
  ASSERT_EQ(back->stall_starts.size(), 2u);
  EXPECT_EQ(back->stall_starts[1].seed, 8u);
  EXPECT_EQ(back->stall_starts[1].ended, "stalled at step 31");
  EXPECT_EQ(back->stall_starts[1].validation_curve.at(1).loss, 1.25);
  nlohmann::json bad = j;
  bad["stall_starts"][1]["steps"] = "many";
  auto r = ArmResultFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stall_starts[].steps"), std::string::npos) << r.status();
  bad = j;
  bad["stall_starts"][0]["validation_curve"] = 3;
  r = ArmResultFromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stall_starts[].validation_curve"), std::string::npos)
      << r.status();
  nlohmann::json old = j;  // a state written before stall restarts
  old.erase("stall_starts");
  old.erase("stall_restarts_begun");
  auto o = ArmResultFromJson(old);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->stall_starts.empty());
  EXPECT_EQ(o->stall_restarts_begun, 0);
}

}  // namespace
}  // namespace flashtick
