// The application's own SQLite store, `<data_dir>/app.db`: users, API keys,
// browser sessions and the token-usage ledger. The schema and its versioned
// migrations are described once, in db.cpp.
//
// Thread-safety: one connection per Db, serialized by Db's mutex. Every
// Statement must be prepared, run and destroyed while the caller holds the
// lock returned by Db::Lock(). Lock order inside accounts/: a component's
// own mutex first, then the Db lock; never the reverse.
//
// This header does not include sqlite3.h; SQLite lives behind db.cpp only.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ragd::accounts {

// One prepared statement. Move-only; must not outlive its Db.
// Bind indexes are 1-based, column indexes 0-based (as in SQLite).
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, std::optional<int64_t> value);  // nullopt binds NULL
  Statement& BindBlob(int index, const void* data, size_t size);

  // Advances one row: true when a row is ready, false when done.
  Result<bool> Step();
  // Steps to completion (for statements that return no rows).
  Status Run();

  int64_t ColumnInt(int column) const;
  std::optional<int64_t> ColumnOptionalInt(int column) const;
  std::string ColumnText(int column) const;
  bool ColumnIsNull(int column) const;

 private:
  friend class Db;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  Status bind_error_;  // the first bind failure, reported by Step/Run
};

class Db {
 public:
  // Opens (creating if needed) the database at `path`, creating its parent
  // folder, enables WAL and foreign keys, and applies pending migrations.
  // ":memory:" gives a private in-memory database (tests).
  // Errors: IoError (cannot open/write), Unsupported (made by a newer ragd),
  // Corrupt (not a database).
  static Result<std::unique_ptr<Db>> Open(const std::string& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Holds the connection; see the file comment.
  std::unique_lock<std::mutex> Lock() { return std::unique_lock<std::mutex>(mu_); }

  // Runs one or more statements without results. Caller holds Lock().
  Status Exec(const char* sql);
  // Prepares one statement. Caller holds Lock().
  Result<Statement> Prepare(const char* sql);
  // Row id of the last successful INSERT on this connection. Caller holds Lock().
  int64_t LastInsertRowId() const;
  // Rows changed by the last statement. Caller holds Lock().
  int64_t Changes() const;

  // The schema version this build writes (PRAGMA user_version).
  static int SchemaVersion();

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  Status Migrate();

  std::mutex mu_;
  sqlite3* db_;
};

}  // namespace ragd::accounts
