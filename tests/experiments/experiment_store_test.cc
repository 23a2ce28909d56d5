// Experiment store (server/experiments/experiment_store.h): WAL mode; create, get,
// list (filter, paging), state changes with timestamps and history, idempotent
// submit by request key, arms upsert; and everything survives closing and
// reopening the database (a restart), where QUEUED and RUNNING experiments come
// back as unfinished, oldest first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "server/experiments/experiment_store.h"

namespace flashtick {
namespace {

std::string FreshDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/store_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(ExperimentStore, RoundTripAndRestart) {
  const std::string dir = FreshDir("roundtrip");
  std::string a_id, b_id, c_id;
  {
    auto store = ExperimentStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->journal_mode(), "wal");
    bool created = false;
    auto a = (*store)->Create("first", R"({"name":"first"})", "key-1", &created);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_TRUE(created);
    EXPECT_EQ(a->id, "exp-000001");
    EXPECT_EQ(a->state, ExpState::kQueued);
    EXPECT_EQ(a->dir, dir + "/exp-000001");
    a_id = a->id;
    // The same request key returns the first experiment, not a new one.
    auto again = (*store)->Create("first", R"({"name":"first"})", "key-1", &created);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(created);
    EXPECT_EQ(again->id, a_id);
    auto b = (*store)->Create("second", "{}", "", &created);
    auto c = (*store)->Create("third", "{}", "", &created);
    ASSERT_TRUE(b.ok() && c.ok());
    b_id = b->id;
    c_id = c->id;
    ASSERT_TRUE((*store)->SetState(a_id, ExpState::kRunning, "started").ok());
    ASSERT_TRUE((*store)->SetState(b_id, ExpState::kRunning, "started").ok());
    ASSERT_TRUE((*store)->SetState(b_id, ExpState::kSucceeded, "PASS: ...", "",
                                   R"({"passed":true})")
                    .ok());
    ArmRecord arm;
    arm.experiment_id = a_id;
    arm.arm_index = 1;
    arm.arm_id = "n128";
    arm.context = 128;
    arm.seed = 1;
    arm.state = "running";
    arm.step = 42;
    arm.total_steps = 100;
    arm.loss = 0.75;
    ASSERT_TRUE((*store)->UpsertArm(arm).ok());
    arm.step = 43;  // an update replaces the row
    ASSERT_TRUE((*store)->UpsertArm(arm).ok());
    EXPECT_EQ((*store)->SetState("exp-999999", ExpState::kFailed, "x").code(),
              absl::StatusCode::kNotFound);
  }  // closed: what follows reads only the file

  auto store = ExperimentStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto a = (*store)->Get(a_id);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->name, "first");
  EXPECT_EQ(a->state, ExpState::kRunning);
  EXPECT_GT(a->started_us, 0);
  EXPECT_EQ(a->finished_us, 0);
  auto b = (*store)->Get(b_id);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->state, ExpState::kSucceeded);
  EXPECT_GE(b->finished_us, b->started_us);
  EXPECT_EQ(b->verdict_json, R"({"passed":true})");
  auto arms = (*store)->Arms(a_id);
  ASSERT_TRUE(arms.ok());
  ASSERT_EQ(arms->size(), 1u);
  EXPECT_EQ((*arms)[0].step, 43);
  EXPECT_EQ((*arms)[0].arm_id, "n128");
  EXPECT_DOUBLE_EQ((*arms)[0].loss, 0.75);
  auto events = (*store)->Events(b_id);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);  // submitted, started, succeeded
  EXPECT_EQ((*events)[2].message, "PASS: ...");
  // After a restart: the running and the queued experiment, oldest first.
  auto unfinished = (*store)->Unfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 2u);
  EXPECT_EQ((*unfinished)[0].id, a_id);
  EXPECT_EQ((*unfinished)[1].id, c_id);
  // The next id continues the sequence.
  bool created = false;
  auto d = (*store)->Create("fourth", "{}", "", &created);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->id, "exp-000004");
  // List: newest first, filtered, paged by seq.
  auto all = (*store)->List(0, 0, 10);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].id, "exp-000004");
  auto done = (*store)->List(static_cast<int>(ExpState::kSucceeded), 0, 10);
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0].id, b_id);
  auto page = (*store)->List(0, 3, 10);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].id, "exp-000002");
  auto counts = (*store)->CountByState();
  ASSERT_TRUE(counts.ok());
  int64_t total = 0;
  for (const auto& [state, n] : *counts) total += n;
  EXPECT_EQ(total, 4);
  EXPECT_EQ((*store)->Get("exp-404").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE((*store)->RequestCancel(c_id).ok());
  EXPECT_TRUE((*store)->Get(c_id)->cancel_requested);
}

TEST(ExperimentStore, RefusesANewerSchema) {
  const std::string dir = FreshDir("schema");
  {
    auto store = ExperimentStore::Open(dir);
    ASSERT_TRUE(store.ok());
  }
  auto db = SqliteDb::Open(dir + "/experiments.db");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("PRAGMA user_version = 99;").ok());
  db->reset();
  auto store = ExperimentStore::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("newer"), std::string::npos);
}

}  // namespace
}  // namespace flashtick
