// Db on SQLite: `<data_dir>/app.db`, the default accounts store.
#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "accounts/db.h"

namespace ragd::accounts {
namespace {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return Status::Corrupt(std::move(message));
  if (primary == SQLITE_CONSTRAINT) return Status::AlreadyExists(std::move(message));
  return Status::IoError(std::move(message));
}

class SqliteStatement final : public Statement::Impl {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  Status BindInt(int index, int64_t value) override { return Check(sqlite3_bind_int64(stmt_, index, value)); }
  Status BindText(int index, std::string_view text) override {
    return Check(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  Status BindNull(int index) override { return Check(sqlite3_bind_null(stmt_, index)); }
  Status BindBlob(int index, const void* data, size_t size) override {
    return Check(sqlite3_bind_blob64(stmt_, index, data, size, SQLITE_TRANSIENT));
  }

  Result<bool> Step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteError(db_, rc, "sqlite step");
  }

  bool IsNull(int column) const override { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  int64_t Int(int column) const override { return sqlite3_column_int64(stmt_, column); }
  std::string Text(int column) const override {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column));
  }
  std::string Blob(int column) const override {
    const void* blob = sqlite3_column_blob(stmt_, column);
    if (blob == nullptr) return {};
    return std::string(static_cast<const char*>(blob), sqlite3_column_bytes(stmt_, column));
  }

 private:
  Status Check(int rc) const { return rc == SQLITE_OK ? Status::Ok() : SqliteError(db_, rc, "bind"); }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class SqliteDb final : public Db {
 public:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  ~SqliteDb() override { sqlite3_close(db_); }

  Status Open() {
    sqlite3_busy_timeout(db_, 5000);  // another process (the CLI) may hold a write lock briefly
    auto lock = Lock();
    // journal_mode answers with a row; WAL is not available for :memory:.
    RAGD_RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"));
    return Migrate();
  }

  Dialect dialect() const override { return Dialect::kSqlite; }

  Status Exec(const char* sql) override {
    char* error = nullptr;
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &error);
    if (rc == SQLITE_OK) return Status::Ok();
    std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    int primary = rc & 0xff;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return Status::Corrupt(message);
    return Status::IoError(message);
  }

  Result<Statement> Prepare(const char* sql) override {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return SqliteError(db_, rc, "sqlite prepare");
    }
    return Statement(std::make_unique<SqliteStatement>(db_, stmt));
  }

  int64_t Changes() const override { return sqlite3_changes64(db_); }

  Status Begin() override { return Exec("BEGIN IMMEDIATE"); }

 protected:
  Result<int> ReadVersion() override {
    Result<Statement> query = Prepare("PRAGMA user_version");
    if (!query.ok()) return query.status();
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    return *row ? static_cast<int>(query->ColumnInt(0)) : 0;
  }

  Status WriteVersion(int version) override {
    std::string bump = "PRAGMA user_version = " + std::to_string(version);
    return Exec(bump.c_str());
  }

 private:
  sqlite3* db_;
};

}  // namespace

Result<std::unique_ptr<Db>> Db::Open(const std::string& path) {
  if (path != ":memory:") {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return Status::IoError("cannot create " + parent.string() + ": " + ec.message());
  }
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(raw, rc, "cannot open " + path);
    sqlite3_close(raw);
    return status;
  }
  auto db = std::make_unique<SqliteDb>(raw);
  RAGD_RETURN_IF_ERROR(db->Open());
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace ragd::accounts
