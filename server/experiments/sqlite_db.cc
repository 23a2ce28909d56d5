// SqliteDb (see sqlite_db.h).
#include "server/experiments/sqlite_db.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

constexpr int kBusyTimeoutMs = 5000;

absl::Status Error(sqlite3* db, int rc, const std::string& what) {
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const std::string text = absl::StrCat("experiment store: ", what, ": ", msg);
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return absl::UnavailableError(text);
  if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) return absl::DataLossError(text);
  if (rc == SQLITE_CANTOPEN || rc == SQLITE_PERM || rc == SQLITE_READONLY) {
    return absl::FailedPreconditionError(text);
  }
  return absl::InternalError(text);
}

}  // namespace

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) bind_error_ = rc;
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) bind_error_ = rc;
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, const std::string& value) {
  const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) bind_error_ = rc;
  return *this;
}

absl::StatusOr<bool> SqliteStatement::Step() {
  if (bind_error_ != SQLITE_OK) return Error(db_, bind_error_, absl::StrCat("bind in ", sql_));
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(db_, rc, sql_);
}

absl::Status SqliteStatement::Run() {
  for (;;) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

double SqliteStatement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string SqliteStatement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  const int bytes = sqlite3_column_bytes(stmt_, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text), bytes);
}

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw));
  if (rc != SQLITE_OK) return Error(raw, rc, absl::StrCat("cannot open ", path));
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  if (absl::Status s = db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                                "PRAGMA foreign_keys=ON;");
      !s.ok()) {
    return s;
  }
  return db;
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

absl::Status SqliteDb::Exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return absl::OkStatus();
  const std::string message = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return absl::InternalError(absl::StrCat("experiment store: ", message, " in ", sql));
}

absl::StatusOr<std::unique_ptr<SqliteStatement>> SqliteDb::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return Error(db_, rc, sql);
  return std::unique_ptr<SqliteStatement>(new SqliteStatement(db_, stmt, sql));
}

int SqliteDb::Changes() const { return sqlite3_changes(db_); }

absl::StatusOr<std::string> SqliteDb::JournalMode() {
  auto stmt = Prepare("PRAGMA journal_mode;");
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  return *row ? (*stmt)->Text(0) : std::string();
}

}  // namespace flashtick
