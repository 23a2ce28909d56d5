// ExperimentStore (see experiment_store.h). The schema is created if missing;
// `schema_version` in PRAGMA user_version guards future migrations.
#include "server/experiments/experiment_store.h"

#include <chrono>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/file_io.h"

namespace flashtick {
namespace {

// 1: the first schema; 2: experiments.client (added in place to a version-1 store).
constexpr int kSchemaVersion = 2;

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS experiments (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  state INTEGER NOT NULL,
  config_json TEXT NOT NULL,
  request_key TEXT NOT NULL DEFAULT '',
  created_us INTEGER NOT NULL,
  started_us INTEGER NOT NULL DEFAULT 0,
  finished_us INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  verdict_json TEXT NOT NULL DEFAULT '',
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  dir TEXT NOT NULL,
  client TEXT NOT NULL DEFAULT '');
CREATE UNIQUE INDEX IF NOT EXISTS experiments_request_key
  ON experiments(request_key) WHERE request_key <> '';
CREATE TABLE IF NOT EXISTS arms (
  experiment_id TEXT NOT NULL REFERENCES experiments(id),
  arm_index INTEGER NOT NULL,
  arm_id TEXT NOT NULL,
  context INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  state TEXT NOT NULL,
  fold INTEGER NOT NULL, folds INTEGER NOT NULL, epoch REAL NOT NULL,
  step INTEGER NOT NULL, total_steps INTEGER NOT NULL,
  loss REAL NOT NULL, tokens_per_second REAL NOT NULL,
  peak_memory_bytes INTEGER NOT NULL, kernel_path TEXT NOT NULL,
  result_json TEXT NOT NULL,
  PRIMARY KEY (experiment_id, arm_index));
CREATE TABLE IF NOT EXISTS events (
  experiment_id TEXT NOT NULL REFERENCES experiments(id),
  time_us INTEGER NOT NULL,
  state INTEGER NOT NULL,
  message TEXT NOT NULL);
)sql";

constexpr char kColumns[] =
    "seq, id, name, state, config_json, request_key, created_us, started_us, finished_us, "
    "error, verdict_json, cancel_requested, dir, client";

ExperimentRecord Row(const SqliteStatement& s) {
  ExperimentRecord r;
  r.seq = s.Int(0);
  r.id = s.Text(1);
  r.name = s.Text(2);
  r.state = static_cast<ExpState>(s.Int(3));
  r.config_json = s.Text(4);
  r.request_key = s.Text(5);
  r.created_us = s.Int(6);
  r.started_us = s.Int(7);
  r.finished_us = s.Int(8);
  r.error = s.Text(9);
  r.verdict_json = s.Text(10);
  r.cancel_requested = s.Int(11) != 0;
  r.dir = s.Text(12);
  r.client = s.Text(13);
  return r;
}

absl::StatusOr<std::vector<ExperimentRecord>> All(SqliteStatement* s) {
  std::vector<ExperimentRecord> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) return out;
    out.push_back(Row(*s));
  }
}

}  // namespace

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* ExpStateName(ExpState s) {
  switch (s) {
    case ExpState::kQueued:
      return "queued";
    case ExpState::kRunning:
      return "running";
    case ExpState::kSucceeded:
      return "succeeded";
    case ExpState::kFailed:
      return "failed";
    case ExpState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

bool IsTerminal(ExpState s) {
  return s == ExpState::kSucceeded || s == ExpState::kFailed || s == ExpState::kCancelled;
}

absl::StatusOr<std::unique_ptr<ExperimentStore>> ExperimentStore::Open(const std::string& dir) {
  RETURN_IF_ERROR(MakeDirs(dir));
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(dir + "/experiments.db"));
  std::unique_ptr<ExperimentStore> store(new ExperimentStore(std::move(db), dir));
  RETURN_IF_ERROR(store->Migrate());
  ASSIGN_OR_RETURN(store->journal_mode_, store->db_->JournalMode());
  return store;
}

absl::Status ExperimentStore::Migrate() {
  ASSIGN_OR_RETURN(auto v, db_->Prepare("PRAGMA user_version;"));
  ASSIGN_OR_RETURN(bool row, v->Step());
  const int64_t version = row ? v->Int(0) : 0;
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "experiment store: schema version ", version, " is newer than this flashtickd (",
        kSchemaVersion, "); use a newer flashtickd or another --experiment-dir"));
  }
  RETURN_IF_ERROR(db_->Exec(kSchema));
  if (version == 1) {  // CREATE TABLE IF NOT EXISTS kept the old table: add the column
    RETURN_IF_ERROR(
        db_->Exec("ALTER TABLE experiments ADD COLUMN client TEXT NOT NULL DEFAULT '';"));
  }
  return db_->Exec(absl::StrCat("PRAGMA user_version = ", kSchemaVersion, ";"));
}

absl::StatusOr<ExperimentRecord> ExperimentStore::Create(const std::string& name,
                                                         const std::string& config_json,
                                                         const std::string& request_key,
                                                         bool* created,
                                                         const Submitter& submitter) {
  std::lock_guard<std::mutex> lock(mu_);
  *created = false;
  if (!request_key.empty()) {
    ASSIGN_OR_RETURN(auto q, db_->Prepare(absl::StrCat("SELECT ", kColumns,
                                                       " FROM experiments WHERE request_key = ?")));
    q->Bind(1, request_key);
    ASSIGN_OR_RETURN(std::vector<ExperimentRecord> found, All(q.get()));
    if (!found.empty()) return found.front();
  }
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE;"));
  auto insert = [&]() -> absl::StatusOr<ExperimentRecord> {
    if (submitter.max_active > 0) {
      ASSIGN_OR_RETURN(auto count, db_->Prepare("SELECT COUNT(*) FROM experiments WHERE "
                                                "client = ? AND state IN (?, ?)"));
      count->Bind(1, submitter.client)
          .Bind(2, static_cast<int64_t>(ExpState::kQueued))
          .Bind(3, static_cast<int64_t>(ExpState::kRunning));
      ASSIGN_OR_RETURN(bool counted, count->Step());
      const int64_t active = counted ? count->Int(0) : 0;
      if (active >= submitter.max_active) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "client ", submitter.client, " already has ", active,
            " experiments queued or running, the per-client limit "
            "(--max-experiments-per-client ", submitter.max_active,
            "); wait for one to finish or cancel one (flashtick sweep cancel ID)"));
      }
    }
    // sqlite_sequence remembers the largest seq ever used (AUTOINCREMENT), so the
    // id of a deleted experiment is not given to a new one.
    ASSIGN_OR_RETURN(auto next, db_->Prepare(
        "SELECT MAX(COALESCE((SELECT MAX(seq) FROM experiments), 0), "
        "COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'experiments'), 0)) + 1"));
    ASSIGN_OR_RETURN(bool row, next->Step());
    const int64_t seq = row ? next->Int(0) : 1;
    char id[32];
    std::snprintf(id, sizeof(id), "exp-%06lld", static_cast<long long>(seq));
    ExperimentRecord r;
    r.seq = seq;
    r.id = id;
    r.name = name;
    r.config_json = config_json;
    r.request_key = request_key;
    r.created_us = NowMicros();
    r.dir = absl::StrCat(root_, "/", r.id);
    r.client = submitter.client;
    ASSIGN_OR_RETURN(auto ins, db_->Prepare(
        "INSERT INTO experiments (seq, id, name, state, config_json, request_key, created_us, "
        "dir, client) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    ins->Bind(1, seq).Bind(2, r.id).Bind(3, name).Bind(4, int64_t{1}).Bind(5, config_json);
    ins->Bind(6, request_key).Bind(7, r.created_us).Bind(8, r.dir).Bind(9, r.client);
    RETURN_IF_ERROR(ins->Run());
    RETURN_IF_ERROR(AddEventLocked(r.id, ExpState::kQueued, "submitted"));
    return r;
  };
  absl::StatusOr<ExperimentRecord> r = insert();
  RETURN_IF_ERROR(db_->Exec(r.ok() ? "COMMIT;" : "ROLLBACK;"));
  if (r.ok()) *created = true;
  return r;
}

absl::StatusOr<ExperimentRecord> ExperimentStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto q, db_->Prepare(absl::StrCat("SELECT ", kColumns,
                                                     " FROM experiments WHERE id = ?")));
  q->Bind(1, id);
  ASSIGN_OR_RETURN(std::vector<ExperimentRecord> found, All(q.get()));
  if (found.empty()) {
    return absl::NotFoundError(absl::StrCat("no experiment '", id,
                                            "'; `flashtick sweep list` shows the ids"));
  }
  return found.front();
}

absl::StatusOr<std::vector<ExperimentRecord>> ExperimentStore::List(int state, int64_t before_seq,
                                                                    int limit,
                                                                    const std::string* client) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto q, db_->Prepare(absl::StrCat(
                               "SELECT ", kColumns,
                               " FROM experiments WHERE (? = 0 OR state = ?) AND (? <= 0 OR "
                               "seq < ?) AND (? = 0 OR client = ?) ORDER BY seq DESC LIMIT ?")));
  q->Bind(1, int64_t{state}).Bind(2, int64_t{state}).Bind(3, before_seq).Bind(4, before_seq);
  const std::string only = client != nullptr ? *client : "";
  q->Bind(5, int64_t{client != nullptr ? 1 : 0}).Bind(6, only);
  q->Bind(7, int64_t{limit});
  return All(q.get());
}

absl::StatusOr<std::vector<ExperimentRecord>> ExperimentStore::Unfinished() {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto q, db_->Prepare(absl::StrCat("SELECT ", kColumns,
                                                     " FROM experiments WHERE state IN (1, 2) "
                                                     "ORDER BY seq ASC")));
  return All(q.get());
}

absl::Status ExperimentStore::AddEventLocked(const std::string& id, ExpState state,
                                             const std::string& message) {
  ASSIGN_OR_RETURN(auto ins, db_->Prepare(
      "INSERT INTO events (experiment_id, time_us, state, message) VALUES (?, ?, ?, ?)"));
  ins->Bind(1, id).Bind(2, NowMicros()).Bind(3, static_cast<int64_t>(state)).Bind(4, message);
  return ins->Run();
}

absl::Status ExperimentStore::SetState(const std::string& id, ExpState state,
                                       const std::string& message, const std::string& error,
                                       const std::string& verdict_json) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = NowMicros();
  ASSIGN_OR_RETURN(auto up, db_->Prepare(
      "UPDATE experiments SET state = ?, "
      "started_us = CASE WHEN ? = 2 AND started_us = 0 THEN ? ELSE started_us END, "
      "finished_us = CASE WHEN ? IN (3, 4, 5) THEN ? ELSE 0 END, "
      "error = ?, verdict_json = CASE WHEN ? <> '' THEN ? ELSE verdict_json END WHERE id = ?"));
  const int64_t s = static_cast<int64_t>(state);
  up->Bind(1, s).Bind(2, s).Bind(3, now).Bind(4, s).Bind(5, now).Bind(6, error);
  up->Bind(7, verdict_json).Bind(8, verdict_json).Bind(9, id);
  RETURN_IF_ERROR(up->Run());
  if (db_->Changes() == 0) return absl::NotFoundError(absl::StrCat("no experiment '", id, "'"));
  return AddEventLocked(id, state, message);
}

absl::Status ExperimentStore::RequestCancel(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto up, db_->Prepare(
      "UPDATE experiments SET cancel_requested = 1 WHERE id = ?"));
  up->Bind(1, id);
  RETURN_IF_ERROR(up->Run());
  if (db_->Changes() == 0) return absl::NotFoundError(absl::StrCat("no experiment '", id, "'"));
  return absl::OkStatus();
}

absl::Status ExperimentStore::Delete(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE;"));
  auto remove = [&]() -> absl::Status {
    for (const char* sql : {"DELETE FROM arms WHERE experiment_id = ?",
                            "DELETE FROM events WHERE experiment_id = ?"}) {
      ASSIGN_OR_RETURN(auto q, db_->Prepare(sql));
      q->Bind(1, id);
      RETURN_IF_ERROR(q->Run());
    }
    ASSIGN_OR_RETURN(auto q, db_->Prepare("DELETE FROM experiments WHERE id = ?"));
    q->Bind(1, id);
    RETURN_IF_ERROR(q->Run());
    ASSIGN_OR_RETURN(auto changed, db_->Prepare("SELECT changes()"));
    ASSIGN_OR_RETURN(bool row, changed->Step());
    if (!row || changed->Int(0) == 0) {
      return absl::NotFoundError(absl::StrCat("no experiment '", id, "'"));
    }
    return absl::OkStatus();
  };
  const absl::Status s = remove();
  RETURN_IF_ERROR(db_->Exec(s.ok() ? "COMMIT;" : "ROLLBACK;"));
  return s;
}

absl::Status ExperimentStore::UpsertArm(const ArmRecord& a) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto up, db_->Prepare(
      "INSERT OR REPLACE INTO arms (experiment_id, arm_index, arm_id, context, seed, state, "
      "fold, folds, epoch, step, total_steps, loss, tokens_per_second, peak_memory_bytes, "
      "kernel_path, result_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  up->Bind(1, a.experiment_id).Bind(2, int64_t{a.arm_index}).Bind(3, a.arm_id);
  up->Bind(4, a.context).Bind(5, static_cast<int64_t>(a.seed)).Bind(6, a.state);
  up->Bind(7, int64_t{a.fold}).Bind(8, int64_t{a.folds}).Bind(9, a.epoch).Bind(10, a.step);
  up->Bind(11, a.total_steps).Bind(12, a.loss).Bind(13, a.tokens_per_second);
  up->Bind(14, a.peak_memory_bytes).Bind(15, a.kernel_path).Bind(16, a.result_json);
  return up->Run();
}

absl::StatusOr<std::vector<ArmRecord>> ExperimentStore::Arms(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto q, db_->Prepare(
      "SELECT arm_index, arm_id, context, seed, state, fold, folds, epoch, step, total_steps, "
      "loss, tokens_per_second, peak_memory_bytes, kernel_path, result_json FROM arms "
      "WHERE experiment_id = ? ORDER BY arm_index"));
  q->Bind(1, id);
  std::vector<ArmRecord> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return out;
    ArmRecord a;
    a.experiment_id = id;
    a.arm_index = static_cast<int>(q->Int(0));
    a.arm_id = q->Text(1);
    a.context = q->Int(2);
    a.seed = static_cast<uint64_t>(q->Int(3));
    a.state = q->Text(4);
    a.fold = static_cast<int>(q->Int(5));
    a.folds = static_cast<int>(q->Int(6));
    a.epoch = q->Double(7);
    a.step = q->Int(8);
    a.total_steps = q->Int(9);
    a.loss = q->Double(10);
    a.tokens_per_second = q->Double(11);
    a.peak_memory_bytes = q->Int(12);
    a.kernel_path = q->Text(13);
    a.result_json = q->Text(14);
    out.push_back(std::move(a));
  }
}

absl::StatusOr<std::vector<EventRecord>> ExperimentStore::Events(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto q, db_->Prepare(
      "SELECT time_us, state, message FROM events WHERE experiment_id = ? ORDER BY rowid"));
  q->Bind(1, id);
  std::vector<EventRecord> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return out;
    out.push_back({q->Int(0), static_cast<ExpState>(q->Int(1)), q->Text(2)});
  }
}

absl::StatusOr<std::vector<std::pair<ExpState, int64_t>>> ExperimentStore::CountByState() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<ExpState, int64_t>> out;
  for (ExpState s : {ExpState::kQueued, ExpState::kRunning, ExpState::kSucceeded,
                     ExpState::kFailed, ExpState::kCancelled}) {
    ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT COUNT(*) FROM experiments WHERE state = ?"));
    q->Bind(1, static_cast<int64_t>(s));
    ASSIGN_OR_RETURN(bool row, q->Step());
    out.emplace_back(s, row ? q->Int(0) : 0);
  }
  return out;
}

}  // namespace flashtick
