#include "accounts/db.h"

#include <sqlite3.h>

#include <filesystem>
#include <iterator>
#include <system_error>
#include <utility>

namespace ragd::accounts {
namespace {

// The app.db schema. Entry i moves the database from user_version i to i+1;
// entries are never edited once released, only appended. All times are Unix
// seconds (UTC).
//
// users      one row per account. username is unique ignoring ASCII case.
//            password_hash is a libsodium crypto_pwhash_str string (Argon2id,
//            parameters inside the string) or NULL for key-only accounts.
//            token_quota NULL means the configured default budget.
// api_keys   key_hash is BLAKE2b-256 of the full key text (see secrets.h);
//            prefix is the key's first characters, for display only.
// sessions   token_hash is BLAKE2b-256 of the session token; a session is
//            valid while now < expires_at (sliding, capped at created_at +
//            the maximum lifetime; see sessions.h).
// usage      one row per settled request: the tokens actually charged. The
//            used budget of a period is SUM(prompt+completion) over its rows.
//            completed (v2) is 1 when the request finished normally (Settle),
//            0 when it was released unfinished (error, cancel, client gone).
// conversations (v3) the chat page's conversations of one user; title ''
//            until the first question names it (conversations.h).
// messages   (v3) the turns of a conversation, in id order (AUTOINCREMENT:
//            an id is never reused, so a rating's message_id stays unique);
//            details is opaque text written by the app (citations as JSON).
// feedback   (v3) one rating (+1/-1) per user and answer, with copies of the
//            question, answer and details that outlive the conversation
//            (message_id becomes NULL then).
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  username      TEXT    NOT NULL UNIQUE COLLATE NOCASE,
  role          TEXT    NOT NULL CHECK (role IN ('admin', 'user')),
  password_hash TEXT,
  token_quota   INTEGER CHECK (token_quota IS NULL OR token_quota >= 0),
  created_at    INTEGER NOT NULL,
  disabled      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE api_keys (
  id         INTEGER PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_hash   BLOB    NOT NULL UNIQUE,
  prefix     TEXT    NOT NULL,
  name       TEXT    NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL
);
CREATE INDEX api_keys_user ON api_keys(user_id);
CREATE TABLE sessions (
  token_hash BLOB    PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE TABLE usage (
  id                INTEGER PRIMARY KEY,
  user_id           INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  route             TEXT    NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  created_at        INTEGER NOT NULL
);
CREATE INDEX usage_user_time ON usage(user_id, created_at);
)sql",
    R"sql(
ALTER TABLE usage ADD COLUMN completed INTEGER NOT NULL DEFAULT 1;
)sql",
    R"sql(
CREATE TABLE conversations (
  id         INTEGER PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  title      TEXT    NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX conversations_user ON conversations(user_id, updated_at);
CREATE TABLE messages (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  role            TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
  content         TEXT    NOT NULL,
  details         TEXT    NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL
);
CREATE INDEX messages_conversation ON messages(conversation_id, id);
CREATE TABLE feedback (
  id         INTEGER PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  rating     INTEGER NOT NULL CHECK (rating IN (-1, 1)),
  comment    TEXT    NOT NULL DEFAULT '',
  question   TEXT    NOT NULL,
  answer     TEXT    NOT NULL,
  details    TEXT    NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  UNIQUE (user_id, message_id)
);
)sql",
};

constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return Status::Corrupt(std::move(message));
  if (primary == SQLITE_CONSTRAINT) return Status::AlreadyExists(std::move(message));
  return Status::IoError(std::move(message));
}

}  // namespace

// ---- Statement ----

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = SqliteError(db_, rc, "bind");
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = SqliteError(db_, rc, "bind");
  return *this;
}

Statement& Statement::Bind(int index, std::optional<int64_t> value) {
  if (value) return Bind(index, *value);
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = SqliteError(db_, rc, "bind");
  return *this;
}

Statement& Statement::BindBlob(int index, const void* data, size_t size) {
  int rc = sqlite3_bind_blob64(stmt_, index, data, size, SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = SqliteError(db_, rc, "bind");
  return *this;
}

Result<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, "sqlite step");
}

Status Statement::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

int64_t Statement::ColumnInt(int column) const { return sqlite3_column_int64(stmt_, column); }

std::optional<int64_t> Statement::ColumnOptionalInt(int column) const {
  if (ColumnIsNull(column)) return std::nullopt;
  return ColumnInt(column);
}

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column));
}

bool Statement::ColumnIsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

// ---- Db ----

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
  std::unique_ptr<Db> db(new Db(raw));
  sqlite3_busy_timeout(raw, 5000);  // another process (the CLI) may hold a write lock briefly
  auto lock = db->Lock();
  // journal_mode answers with a row; WAL is not available for :memory:.
  RAGD_RETURN_IF_ERROR(
      db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"));
  RAGD_RETURN_IF_ERROR(db->Migrate());
  return db;
}

Db::~Db() { sqlite3_close(db_); }

Status Db::Exec(const char* sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string message = error ? error : sqlite3_errstr(rc);
  sqlite3_free(error);
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return Status::Corrupt(message);
  return Status::IoError(message);
}

Result<Statement> Db::Prepare(const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(db_, rc, "sqlite prepare");
  }
  return Statement(db_, stmt);
}

int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Db::Changes() const { return sqlite3_changes64(db_); }

int Db::SchemaVersion() { return kSchemaVersion; }

Status Db::Migrate() {
  int version = 0;
  {
    Result<Statement> query = Prepare("PRAGMA user_version");
    if (!query.ok()) return query.status();
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (*row) version = static_cast<int>(query->ColumnInt(0));
  }
  if (version > kSchemaVersion) {
    return Status::Unsupported("app.db has schema version " + std::to_string(version) +
                               "; this ragd understands up to " + std::to_string(kSchemaVersion));
  }
  for (; version < kSchemaVersion; ++version) {
    RAGD_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    Status status = Exec(kMigrations[version]);
    if (status.ok()) {
      std::string bump = "PRAGMA user_version = " + std::to_string(version + 1);
      status = Exec(bump.c_str());
    }
    if (status.ok()) status = Exec("COMMIT");
    if (!status.ok()) {
      Exec("ROLLBACK");
      return Status(status.code(), "app.db migration to version " + std::to_string(version + 1) +
                                       " failed: " + status.message());
    }
  }
  return Status::Ok();
}

}  // namespace ragd::accounts
