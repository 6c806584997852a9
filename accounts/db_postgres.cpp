// Db on PostgreSQL (libpq), for replicas sharing one accounts store.
//
// The shared SQL's `?` placeholders become $1, $2, ... in order; parameters
// are sent typed (BIGINT, TEXT, BYTEA in binary) with PQexecParams, results
// come back as text. One connection per Db, serialized by Db's mutex like
// SQLite's; a connection found broken is reset before the next statement.
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "accounts/db.h"

namespace ragd::accounts {
namespace {

// Type OIDs from PostgreSQL's pg_type catalog (stable across versions).
constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;
constexpr Oid kByteaOid = 17;

// A key for pg_advisory_xact_lock: replicas starting together migrate one at a time.
constexpr int64_t kMigrationLockKey = 0x72616764'61636374;  // "ragdacct"

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

std::string Trimmed(const char* message) {
  std::string out = message ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// A lost database: the details go to the operator's log, not to clients.
Status Unreachable(const std::string& detail) {
  std::fprintf(stderr, "ragd: the accounts database is unreachable: %s\n", detail.c_str());
  return Status::Unavailable("the accounts database is unreachable; try again");
}

// The status of a failed command: constraint violations (SQLSTATE class 23)
// are AlreadyExists as in SQLite, bad data (class 22: invalid UTF-8, a
// value out of range) InvalidArgument, a lost connection Unavailable: the
// connection is marked bad, an error without SQLSTATE (libpq's own, about
// the socket: "server closed the connection unexpectedly" may come while
// the connection still reads as good), class 08 (connection exception) or
// 57P (the server shutting down).
Status PgError(PGconn* conn, const PGresult* result, std::string_view what) {
  std::string message =
      std::string(what) + ": " + Trimmed(result ? PQresultErrorMessage(result) : PQerrorMessage(conn));
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state != nullptr && state[0] == '2' && state[1] == '3')
    return Status::AlreadyExists(std::move(message));
  if (state != nullptr && state[0] == '2' && state[1] == '2')
    return Status::InvalidArgument(std::move(message));
  const std::string_view sqlstate = state != nullptr ? state : "";
  if (PQstatus(conn) != CONNECTION_OK || sqlstate.empty() || sqlstate.starts_with("08") ||
      sqlstate.starts_with("57P"))
    return Unreachable(message);
  return Status::IoError(std::move(message));
}

// `sql` with each `?` outside quotes replaced by $1, $2, ...; `count` gets their number.
std::string NumberPlaceholders(const char* sql, int* count) {
  std::string out;
  *count = 0;
  char quote = 0;
  for (const char* p = sql; *p != '\0'; ++p) {
    if (quote != 0) {
      if (*p == quote) quote = 0;
    } else if (*p == '\'' || *p == '"') {
      quote = *p;
    } else if (*p == '?') {
      out += '$' + std::to_string(++*count);
      continue;
    }
    out += *p;
  }
  return out;
}

class PostgresDb;

class PostgresStatement final : public Statement::Impl {
 public:
  PostgresStatement(PostgresDb* db, std::string sql, int params)
      : db_(db),
        sql_(std::move(sql)),
        values_(params),
        null_(params, true),
        types_(params, 0),
        formats_(params, 0) {}

  Status BindInt(int index, int64_t value) override { return Set(index, std::to_string(value), kInt8Oid, 0); }
  Status BindText(int index, std::string_view text) override {
    // Text parameters travel NUL-terminated, and TEXT cannot hold NUL anyway.
    if (text.find('\0') != std::string_view::npos)
      return Status::InvalidArgument("text with a NUL character cannot be stored");
    return Set(index, std::string(text), kTextOid, 0);
  }
  Status BindNull(int index) override {
    // Untyped: the server takes the column's type (a NULL of any column).
    RAGD_RETURN_IF_ERROR(Set(index, "", 0, 0));
    null_[index - 1] = true;
    return Status::Ok();
  }
  Status BindBlob(int index, const void* data, size_t size) override {
    return Set(index, std::string(static_cast<const char*>(data), size), kByteaOid, 1);
  }

  Result<bool> Step() override;

  bool IsNull(int column) const override { return PQgetisnull(result_.get(), row_, column) != 0; }
  int64_t Int(int column) const override {
    if (IsNull(column)) return 0;
    const char* text = PQgetvalue(result_.get(), row_, column);
    if (text[0] == 't' && text[1] == '\0') return 1;  // a boolean column
    if (text[0] == 'f' && text[1] == '\0') return 0;
    return std::strtoll(text, nullptr, 10);
  }
  std::string Text(int column) const override {
    if (IsNull(column)) return {};
    return std::string(PQgetvalue(result_.get(), row_, column),
                       static_cast<size_t>(PQgetlength(result_.get(), row_, column)));
  }
  std::string Blob(int column) const override {
    if (IsNull(column)) return {};
    // Results come as text: BYTEA is "\x" and hex digits.
    size_t size = 0;
    unsigned char* bytes = PQunescapeBytea(
        reinterpret_cast<const unsigned char*>(PQgetvalue(result_.get(), row_, column)), &size);
    if (bytes == nullptr) return {};
    std::string out(reinterpret_cast<const char*>(bytes), size);
    PQfreemem(bytes);
    return out;
  }

 private:
  Status Set(int index, std::string value, Oid type, int format) {
    if (index < 1 || index > static_cast<int>(values_.size()))
      return Status::InvalidArgument("bind index " + std::to_string(index) + " out of range");
    values_[index - 1] = std::move(value);
    null_[index - 1] = false;
    types_[index - 1] = type;
    formats_[index - 1] = format;
    return Status::Ok();
  }

  PostgresDb* db_;
  std::string sql_;
  std::vector<std::string> values_;
  std::vector<bool> null_;
  std::vector<Oid> types_;
  std::vector<int> formats_;
  PgResult result_;
  bool executed_ = false;
  int row_ = -1;
};

class PostgresDb final : public Db {
 public:
  explicit PostgresDb(PGconn* conn) : conn_(conn) {}
  ~PostgresDb() override { PQfinish(conn_); }

  Status Open() {
    // The server's notices (IF NOT EXISTS skipping, ...) stay in its own log.
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    auto lock = Lock();
    return Migrate();
  }

  Dialect dialect() const override { return Dialect::kPostgres; }

  Status Exec(const char* sql) override {
    RAGD_RETURN_IF_ERROR(Connected());
    PgResult result(PQexec(conn_, sql));
    return Check(result.get(), "postgres");
  }

  Result<Statement> Prepare(const char* sql) override {
    int params = 0;
    std::string numbered = NumberPlaceholders(sql, &params);
    return Statement(std::make_unique<PostgresStatement>(this, std::move(numbered), params));
  }

  int64_t Changes() const override { return changes_; }

  Status Begin() override { return Exec("BEGIN"); }

  // Runs a statement; the caller holds Lock().
  Result<PgResult> Run(const std::string& sql, int params, const char* const* values, const int* lengths,
                       const Oid* types, const int* formats) {
    RAGD_RETURN_IF_ERROR(Connected());
    PgResult result(PQexecParams(conn_, sql.c_str(), params, types, values, lengths, formats, 0));
    RAGD_RETURN_IF_ERROR(Check(result.get(), "postgres"));
    const char* tuples = PQcmdTuples(result.get());
    changes_ = tuples[0] != '\0' ? std::strtoll(tuples, nullptr, 10) : 0;
    return result;
  }

 protected:
  Result<int> ReadVersion() override {
    RAGD_RETURN_IF_ERROR(
        Exec(("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLockKey) + ")").c_str()));
    RAGD_RETURN_IF_ERROR(Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
    Result<Statement> query = Prepare("SELECT version FROM schema_version");
    if (!query.ok()) return query.status();
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (*row) return static_cast<int>(query->ColumnInt(0));
    RAGD_RETURN_IF_ERROR(Exec("INSERT INTO schema_version (version) VALUES (0)"));
    return 0;
  }

  Status WriteVersion(int version) override {
    Result<Statement> update = Prepare("UPDATE schema_version SET version = ?");
    if (!update.ok()) return update.status();
    return update->Bind(1, int64_t{version}).Run();
  }

 private:
  // A connection lost since the last statement (server restart, network)
  // is opened again; a transaction it held is gone with it.
  Status Connected() {
    if (PQstatus(conn_) == CONNECTION_OK && !lost_) return Status::Ok();
    lost_ = false;
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) return Status::Ok();
    return Unreachable(Trimmed(PQerrorMessage(conn_)));
  }

  Status Check(const PGresult* result, std::string_view what) {
    ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return Status::Ok();
    Status error = PgError(conn_, result, what);
    if (error.code() == StatusCode::kUnavailable) lost_ = true;  // reopen before the next statement
    return error;
  }

  PGconn* conn_;
  int64_t changes_ = 0;
  bool lost_ = false;  // the last statement met a lost connection
};

Result<bool> PostgresStatement::Step() {
  if (!executed_) {
    executed_ = true;
    std::vector<const char*> values(values_.size());
    std::vector<int> lengths(values_.size());
    for (size_t i = 0; i < values_.size(); ++i) {
      values[i] = null_[i] ? nullptr : values_[i].c_str();
      lengths[i] = static_cast<int>(values_[i].size());
    }
    Result<PgResult> result = db_->Run(sql_, static_cast<int>(values_.size()), values.data(), lengths.data(),
                                       types_.data(), formats_.data());
    if (!result.ok()) return result.status();
    result_ = std::move(*result);
  }
  if (!result_ || row_ + 1 >= PQntuples(result_.get())) return false;
  ++row_;
  return true;
}

}  // namespace

Result<std::unique_ptr<Db>> Db::OpenPostgres(const std::string& url) {
  // A connection attempt gives up after 10 s unless the URL says otherwise
  // (libpq waits forever by default), so that a database host that went
  // away fails requests and /readyz instead of hanging them.
  const char* const keywords[] = {"connect_timeout", "dbname", nullptr};
  const char* const values[] = {"10", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Status::Internal("postgres: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    Status status = Status::Unavailable("cannot connect to postgres: " + Trimmed(PQerrorMessage(conn)));
    PQfinish(conn);
    return status;
  }
  auto db = std::make_unique<PostgresDb>(conn);
  RAGD_RETURN_IF_ERROR(db->Open());
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace ragd::accounts
