// ExperimentStore: the durable state of flashtickd's experiments, one SQLite file
// (<experiment-dir>/experiments.db, WAL mode) so experiments survive a restart:
//   experiments  id, name, state, the exact configuration JSON, idempotency key,
//                times, error, verdict JSON, the cancel request flag, directory
//   arms         per experiment and arm: state and the latest progress (fold,
//                epoch, step, loss, tokens/s, peak memory, kernel path) and, once
//                finished, the arm's result JSON
//   events       every state change with a message (the history a person reads)
// States use the numbers of flashtick.v1.ExperimentState. Thread-safe: one
// connection behind a mutex (writes are small and rare: state changes and
// progress throttled by the runner).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/experiments/sqlite_db.h"

namespace flashtick {

enum class ExpState : int { kQueued = 1, kRunning = 2, kSucceeded = 3, kFailed = 4, kCancelled = 5 };
const char* ExpStateName(ExpState s);  // "queued", "running", ...
bool IsTerminal(ExpState s);

struct ExperimentRecord {
  std::string id;
  int64_t seq = 0;
  std::string name;
  ExpState state = ExpState::kQueued;
  std::string config_json;
  std::string request_key;
  int64_t created_us = 0, started_us = 0, finished_us = 0;  // Unix microseconds, 0 = not yet
  std::string error;
  std::string verdict_json;  // {"passed":..,"summary":..,...} once succeeded
  bool cancel_requested = false;
  std::string dir;     // the experiment's directory (checkpoints, report)
  std::string client;  // who submitted it (server/client_identity.h); "" before schema 2
};

// Who submits, and how many of their experiments may be queued or running at once
// (0: no limit). Checked in the same transaction as the insert, so two concurrent
// submissions cannot both take the last place.
struct Submitter {
  std::string client;
  int max_active = 0;
};

struct ArmRecord {
  std::string experiment_id;
  int arm_index = 0;
  std::string arm_id;
  int64_t context = 0;
  uint64_t seed = 0;
  std::string state = "pending";  // arm_result.h ArmStateName
  int fold = 0, folds = 0;
  double epoch = 0;
  int64_t step = 0, total_steps = 0;
  double loss = 0, tokens_per_second = 0;
  int64_t peak_memory_bytes = 0;
  std::string kernel_path;
  std::string result_json;  // the ArmResult once the arm finished
};

struct EventRecord {
  int64_t time_us = 0;
  ExpState state = ExpState::kQueued;
  std::string message;
};

class ExperimentStore {
 public:
  // Opens or creates <dir>/experiments.db (dir created if missing).
  static absl::StatusOr<std::unique_ptr<ExperimentStore>> Open(const std::string& dir);

  // A new QUEUED experiment with the next id ("exp-000001", ...) and its directory
  // <root>/<id>. With a non-empty request_key already used, returns that
  // experiment instead (*created = false), limit or not, so a retried submission
  // is never refused. RESOURCE_EXHAUSTED when the submitter already has
  // max_active queued or running.
  absl::StatusOr<ExperimentRecord> Create(const std::string& name, const std::string& config_json,
                                          const std::string& request_key, bool* created,
                                          const Submitter& submitter = {});
  // NotFound naming the id.
  absl::StatusOr<ExperimentRecord> Get(const std::string& id);
  // Newest first; seq < before_seq when before_seq > 0; state 0 = any; only
  // `client`'s when client is not null.
  absl::StatusOr<std::vector<ExperimentRecord>> List(int state, int64_t before_seq, int limit,
                                                     const std::string* client = nullptr);
  // Experiments to pick up after a restart: QUEUED and RUNNING, oldest first.
  absl::StatusOr<std::vector<ExperimentRecord>> Unfinished();
  // Moves to `state` (stamping started/finished times) and logs an event.
  absl::Status SetState(const std::string& id, ExpState state, const std::string& message,
                        const std::string& error = "", const std::string& verdict_json = "");
  absl::Status RequestCancel(const std::string& id);
  // Removes the experiment's rows (experiment, arms, events); NotFound naming the
  // id. Its id is never handed out again.
  absl::Status Delete(const std::string& id);
  absl::Status UpsertArm(const ArmRecord& arm);
  absl::StatusOr<std::vector<ArmRecord>> Arms(const std::string& id);
  absl::StatusOr<std::vector<EventRecord>> Events(const std::string& id);
  // Count per state (for the flashtick_experiments gauge).
  absl::StatusOr<std::vector<std::pair<ExpState, int64_t>>> CountByState();

  const std::string& root() const { return root_; }
  std::string journal_mode() const { return journal_mode_; }

 private:
  ExperimentStore(std::unique_ptr<SqliteDb> db, std::string root)
      : db_(std::move(db)), root_(std::move(root)) {}
  absl::Status Migrate();
  absl::Status AddEventLocked(const std::string& id, ExpState state, const std::string& message);

  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;
  std::string root_;
  std::string journal_mode_;
};

int64_t NowMicros();

}  // namespace flashtick
