// The accounts store: users, API keys, browser sessions, the token-usage
// ledger, conversations and feedback. It lives in SQLite, `<data_dir>/app.db`
// (the default), or in PostgreSQL when `storage.postgres_url` is set, so that
// several ragd replicas share it. The components (users.cpp, ...) hold one
// copy of their logic and speak the SQL both engines accept through this
// seam; the schema and its versioned migrations, with per-engine DDL only
// where it must differ, are described once, in db.cpp.
//
// The shared SQL: `?` placeholders (numbered in order of appearance),
// `INSERT ... RETURNING id` for new ids, `ON CONFLICT` for upserts, integer
// arithmetic for days (created_at / 86400), Begin()/Commit()/Rollback() for
// transactions. A boolean result (`x IS NOT NULL`, EXISTS) reads as 0 or 1.
//
// Thread-safety: one connection per Db, serialized by Db's mutex. Every
// Statement must be prepared, run and destroyed while the caller holds the
// lock returned by Db::Lock(). Lock order inside accounts/: a component's
// own mutex first, then the Db lock; never the reverse.
//
// This header includes neither sqlite3.h nor libpq-fe.h; the engines live
// behind db_sqlite.cpp and db_postgres.cpp only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace ragd::accounts {

enum class Dialect { kSqlite, kPostgres };

// One prepared statement. Move-only; must not outlive its Db.
// Bind indexes are 1-based, column indexes 0-based (as in SQLite). An
// index bound to nothing is NULL.
class Statement {
 public:
  // What an engine implements; callers use Statement.
  class Impl {
   public:
    virtual ~Impl() = default;
    virtual Status BindInt(int index, int64_t value) = 0;
    virtual Status BindText(int index, std::string_view text) = 0;
    virtual Status BindNull(int index) = 0;
    virtual Status BindBlob(int index, const void* data, size_t size) = 0;
    virtual Result<bool> Step() = 0;
    virtual bool IsNull(int column) const = 0;
    virtual int64_t Int(int column) const = 0;
    virtual std::string Text(int column) const = 0;
    virtual std::string Blob(int column) const = 0;
  };

  explicit Statement(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
  Statement(Statement&& other) noexcept = default;
  Statement& operator=(Statement&& other) noexcept = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() = default;

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, std::optional<int64_t> value);  // nullopt binds NULL
  Statement& BindBlob(int index, const void* data, size_t size);

  // Advances one row: true when a row is ready, false when done.
  // A constraint violation (unique, foreign key, check) is AlreadyExists.
  Result<bool> Step();
  // Steps to completion (for statements that return no rows).
  Status Run();

  int64_t ColumnInt(int column) const { return impl_->Int(column); }
  std::optional<int64_t> ColumnOptionalInt(int column) const;
  std::string ColumnText(int column) const { return impl_->Text(column); }
  std::string ColumnBlob(int column) const { return impl_->Blob(column); }
  bool ColumnIsNull(int column) const { return impl_->IsNull(column); }

 private:
  void Note(Status status);

  std::unique_ptr<Impl> impl_;
  Status bind_error_;  // the first bind failure, reported by Step/Run
};

class Db {
 public:
  // Opens (creating if needed) the SQLite database at `path`, creating its
  // parent folder, enables WAL and foreign keys, and applies pending
  // migrations. ":memory:" gives a private in-memory database (tests).
  // Errors: IoError (cannot open/write), Unsupported (made by a newer ragd),
  // Corrupt (not a database).
  static Result<std::unique_ptr<Db>> Open(const std::string& path);
  // Connects to PostgreSQL (`url`: a postgresql:// URL or a libpq
  // "key=value" string) and applies pending migrations; replicas starting
  // together migrate one at a time. Errors: Unavailable (cannot connect),
  // Unsupported (made by a newer ragd), IoError.
  static Result<std::unique_ptr<Db>> OpenPostgres(const std::string& url);
  virtual ~Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Holds the connection; see the file comment.
  std::unique_lock<std::mutex> Lock() { return std::unique_lock<std::mutex>(mu_); }

  virtual Dialect dialect() const = 0;
  // Runs one or more statements without results or parameters. Caller holds Lock().
  virtual Status Exec(const char* sql) = 0;
  // Prepares one statement. Caller holds Lock().
  virtual Result<Statement> Prepare(const char* sql) = 0;
  // Rows changed by the last statement. Caller holds Lock().
  virtual int64_t Changes() const = 0;
  // A write transaction (SQLite takes its write lock at once). Caller holds Lock().
  virtual Status Begin() = 0;
  Status Commit() { return Exec("COMMIT"); }
  Status Rollback() { return Exec("ROLLBACK"); }
  // Begin(), `body`, then Commit(), or Rollback() when either fails (the
  // failure is returned). Caller holds Lock().
  Status InTransaction(const std::function<Status()>& body);

  // The schema version this build writes.
  static int SchemaVersion();

  // Copies every row of `from` into `to` (either engine to either), ids
  // kept, in one transaction of `to`; for moving an app.db to PostgreSQL.
  // `to` must hold no user (AlreadyExists otherwise). Returns the rows
  // copied per table. Takes both Locks.
  static Result<std::vector<std::pair<std::string, int64_t>>> Copy(Db& from, Db& to);

 protected:
  Db() = default;
  // Brings the schema to SchemaVersion() in one transaction. Caller holds Lock().
  Status Migrate();
  // The stored version, read inside Migrate's transaction, and its update.
  virtual Result<int> ReadVersion() = 0;
  virtual Status WriteVersion(int version) = 0;

 private:
  std::mutex mu_;
};

}  // namespace ragd::accounts
