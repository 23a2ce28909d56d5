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

namespace flashtick {
namespace {

// The per-client limit on queued and running experiments: counted per client,
// terminal ones free a place, a retried request key is never refused.
TEST(ExperimentStore, PerClientLimitOnQueuedAndRunning) {
  auto store = ExperimentStore::Open(FreshDir("per_client"));
  ASSERT_TRUE(store.ok()) << store.status();
  const Submitter alice{"token#1", 2}, bob{"token#2", 2};
  bool created = false;
  auto a1 = (*store)->Create("a1", "{}", "a1-key", &created, alice);
  auto a2 = (*store)->Create("a2", "{}", "", &created, alice);
  ASSERT_TRUE(a1.ok() && a2.ok());
  EXPECT_EQ(a1->client, "token#1");
  ASSERT_TRUE((*store)->SetState(a1->id, ExpState::kRunning, "started").ok());
  auto a3 = (*store)->Create("a3", "{}", "", &created, alice);
  EXPECT_EQ(a3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(a3.status().message().find("--max-experiments-per-client 2"), std::string::npos)
      << a3.status();
  EXPECT_FALSE(created);
  auto retry = (*store)->Create("a1", "{}", "a1-key", &created, alice);
  ASSERT_TRUE(retry.ok()) << "a retried submission is answered, not refused: " << retry.status();
  EXPECT_EQ(retry->id, a1->id);
  EXPECT_TRUE((*store)->Create("b1", "{}", "", &created, bob).ok()) << "other clients count apart";
  ASSERT_TRUE((*store)->SetState(a2->id, ExpState::kCancelled, "cancelled").ok());
  auto a4 = (*store)->Create("a4", "{}", "", &created, alice);
  EXPECT_TRUE(a4.ok()) << "a finished experiment frees its place: " << a4.status();
  auto listed = (*store)->Get(a4->id);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->client, "token#1") << "the submitter is stored";
}

// A store written by schema 1 (no client column) opens, gains the column, keeps its
// experiments (client "") and takes new ones with their client.
TEST(ExperimentStore, MigratesSchemaOneInPlace) {
  const std::string dir = FreshDir("schema1");
  std::filesystem::create_directories(dir);
  {
    auto db = SqliteDb::Open(dir + "/experiments.db");
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Exec(R"sql(
      CREATE TABLE experiments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        state INTEGER NOT NULL, config_json TEXT NOT NULL, request_key TEXT NOT NULL DEFAULT '',
        created_us INTEGER NOT NULL, started_us INTEGER NOT NULL DEFAULT 0,
        finished_us INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',
        verdict_json TEXT NOT NULL DEFAULT '', cancel_requested INTEGER NOT NULL DEFAULT 0,
        dir TEXT NOT NULL);
      INSERT INTO experiments (seq, id, name, state, config_json, created_us, dir)
        VALUES (1, 'exp-000001', 'old', 1, '{}', 1, '/tmp/old');
      PRAGMA user_version = 1;)sql")
                    .ok());
  }
  auto store = ExperimentStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto old = (*store)->Get("exp-000001");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->name, "old");
  EXPECT_EQ(old->client, "");
  bool created = false;
  auto fresh = (*store)->Create("new", "{}", "", &created, {"peer:10.0.0.7", 1});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->id, "exp-000002");
  EXPECT_EQ(fresh->client, "peer:10.0.0.7");
}

}  // namespace
}  // namespace flashtick
