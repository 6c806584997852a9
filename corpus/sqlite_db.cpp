#include "corpus/sqlite_db.h"

#include <sqlite3.h>

#include <cassert>

namespace ragd::corpus::internal {
namespace {

// Maps an SQLite result code onto our codes, keeping SQLite's message.
Status FromSqlite(int rc, sqlite3* db, std::string_view what) {
  std::string message = "sqlite: ";
  message += what;
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(message));
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::IoError(std::move(message));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corrupt(std::move(message));
    case SQLITE_CONSTRAINT:
      return Status::InvalidArgument(std::move(message));
    default:
      return Status::Internal(std::move(message));
  }
}

}  // namespace

Stmt::Stmt(Stmt&& other) noexcept : stmt_(other.stmt_), db_(other.db_) { other.stmt_ = nullptr; }

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

void Stmt::BindInt(int index, int64_t value) {
  [[maybe_unused]] const int rc = sqlite3_bind_int64(stmt_, index, value);
  assert(rc == SQLITE_OK);
}

void Stmt::BindDouble(int index, double value) {
  [[maybe_unused]] const int rc = sqlite3_bind_double(stmt_, index, value);
  assert(rc == SQLITE_OK);
}

void Stmt::BindText(int index, std::string_view value) {
  [[maybe_unused]] const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  assert(rc == SQLITE_OK);
}

void Stmt::BindBlob(int index, const void* data, size_t size) {
  if (size == 0) return BindNull(index);
  [[maybe_unused]] const int rc = sqlite3_bind_blob64(stmt_, index, data, size, SQLITE_TRANSIENT);
  assert(rc == SQLITE_OK);
}

void Stmt::BindNull(int index) {
  [[maybe_unused]] const int rc = sqlite3_bind_null(stmt_, index);
  assert(rc == SQLITE_OK);
}

Result<bool> Stmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return FromSqlite(rc, db_, "step");
}

Status Stmt::Run() {
  for (;;) {
    auto row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

void Stmt::Reset() { sqlite3_reset(stmt_); }

int64_t Stmt::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

double Stmt::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Stmt::ColumnText(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
}

std::span<const uint8_t> Stmt::ColumnBlob(int col) const {
  const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, col));
  const int n = sqlite3_column_bytes(stmt_, col);
  return p == nullptr ? std::span<const uint8_t>() : std::span<const uint8_t>(p, n);
}

bool Stmt::ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, int busy_timeout_ms) {
  sqlite3* handle = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = FromSqlite(rc, handle, "open " + path);
    sqlite3_close_v2(handle);
    return status;
  }
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, busy_timeout_ms);
  return std::unique_ptr<Db>(new Db(handle));
}

Db::~Db() { sqlite3_close_v2(db_); }

Status Db::Exec(std::string_view sql) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  Status status = FromSqlite(rc, db_, error != nullptr ? error : "exec");
  sqlite3_free(error);
  return status;
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return FromSqlite(rc, db_, "prepare");
  return Stmt(stmt, db_);
}

Result<int64_t> Db::QueryInt(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("sqlite: no row from " + std::string(sql));
  return stmt->ColumnInt(0);
}

int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Db::Changes() const { return sqlite3_changes64(db_); }

Transaction::Transaction(Db& db) : db_(db) {
  begin_status_ = db_.Exec("BEGIN IMMEDIATE");
  open_ = begin_status_.ok();
}

Transaction::~Transaction() {
  if (open_) (void)db_.Exec("ROLLBACK");
}

Status Transaction::Commit() {
  assert(open_);
  Status status = db_.Exec("COMMIT");
  if (status.ok()) open_ = false;
  return status;
}

}  // namespace ragd::corpus::internal
