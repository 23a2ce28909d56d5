// SqliteDb: a small RAII wrapper over one SQLite connection for the experiment
// store. Every error becomes an absl::Status carrying sqlite3_errmsg and the SQL
// it came from. Statements bind by 1-based position; Step() returns true while a
// row is available. Not thread-safe by itself: the store serialises access.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace flashtick {

class SqliteStatement {
 public:
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, double value);
  SqliteStatement& Bind(int index, const std::string& value);
  // Runs one step: true with a row to read, false when done.
  absl::StatusOr<bool> Step();
  // Runs to completion (for INSERT/UPDATE).
  absl::Status Run();

  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;

 private:
  friend class SqliteDb;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string sql_;
  int bind_error_ = SQLITE_OK;
};

class SqliteDb {
 public:
  // Opens (creating) the file; sets WAL mode, synchronous=NORMAL (durable across
  // process crashes; WAL keeps the database consistent across power loss) and a
  // busy timeout.
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();

  absl::Status Exec(const std::string& sql);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> Prepare(const std::string& sql);
  int Changes() const;
  // "wal" when write-ahead logging is on.
  absl::StatusOr<std::string> JournalMode();

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace flashtick
