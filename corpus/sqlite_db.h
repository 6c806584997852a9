// Internal: a thin RAII layer over one SQLite connection, so that only
// sqlite_db.cpp includes <sqlite3.h>. SQLite errors become Status values
// carrying SQLite's message. Not part of the public corpus API.
//
// Thread-safety: a Db (and its Stmts) is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ragd::corpus::internal {

class Stmt {
 public:
  Stmt(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&&) = delete;
  ~Stmt();

  // Parameter indexes start at 1; out-of-range indexes are programmer errors.
  void BindInt(int index, int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, std::string_view value);         // copied
  void BindBlob(int index, const void* data, size_t size);  // copied; size 0 binds NULL
  void BindNull(int index);

  // true: a row is available; false: done.
  Result<bool> Step();
  // Runs to completion, ignoring rows.
  Status Run();
  void Reset();  // keeps bindings

  // Column indexes start at 0.
  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  // Valid until the next Step/Reset.
  std::span<const uint8_t> ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  sqlite3_stmt* stmt_;
  sqlite3* db_;
};

class Db {
 public:
  // Opens (creating when missing) the database file in multi-thread mode.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, int busy_timeout_ms);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more ;-separated statements that return no rows of interest.
  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // A single integer from a one-row query (e.g. "PRAGMA user_version").
  Result<int64_t> QueryInt(std::string_view sql);
  int64_t LastInsertRowId() const;
  int64_t Changes() const;
  // The raw connection, for corpus-internal SQLite extensions (fts_rank.cpp).
  sqlite3* handle() const { return db_; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

// BEGIN IMMEDIATE on construction (check status()), ROLLBACK on destruction
// unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  const Status& status() const { return begin_status_; }
  Status Commit();

 private:
  Db& db_;
  Status begin_status_;
  bool open_ = false;
};

}  // namespace ragd::corpus::internal
