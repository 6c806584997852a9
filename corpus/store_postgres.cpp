// Store on PostgreSQL (libpq), the corpus N replicas share. Only this file
// includes <libpq-fe.h>.
//
// Schema (corpus_schema_version holds the version; kMigrations[i] turns
// version i into i + 1; never edit a shipped entry, append one):
//   corpus_documents(id, title, source_name, media_type, byte_size,
//                    sha256 UNIQUE, created_at)      as in SQLite (schema.cpp)
//   corpus_document_texts(document_id, text)
//   corpus_chunks(id, document_id, ordinal, text, start_offset, end_offset,
//                 token_count, heading, embedding, language, tsv)
//     embedding: NULL or little-endian float32 (BYTEA), as in SQLite.
//     language: the text search configuration of the chunk (language.h);
//     tsv: its text (weight A) and heading (weight B) under that configuration.
//   corpus_meta(key, value): 'embedding_dim'.
//   corpus_changes(seq, chunk_id, op): the change sequence (store.h).
// Ids are identities (GENERATED ALWAYS), which never hand out an id twice.
//
// Every write is one transaction that first takes a transaction-level
// advisory lock shared by all writers of the database: writes of all
// replicas take turns, so the sha256 check and the insert cannot race and
// corpus_changes numbers entries in commit order. A write NOTIFYs its
// schema's channel (kChannelSql; delivered at commit) for the replicas'
// WaitForChange.
//
// Connections: one writer (serialized by a mutex) and a pool of readers, as
// on SQLite; a connection found broken is reset before its next use.
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "common/text.h"
#include "corpus/language.h"
#include "corpus/store.h"
#include "corpus/store_common.h"

namespace ragd::corpus::internal {
namespace {

static_assert(std::endian::native == std::endian::little, "embeddings are stored little-endian");

constexpr int64_t kMigrationLockKey = 0x72616764'636f7270;  // "ragdcorp"
constexpr int64_t kWriteLockKey = 0x72616764'63777274;      // "ragdcwrt"
// The NOTIFY channel of the corpus in the connection's schema. Channels are
// database-wide: named by the schema (its oid keeps the name within the 63
// bytes a channel may have), deployments in other schemas of the same
// database do not wake this one's replicas.
constexpr const char* kChannelSql =
    "'corpus_changes_' || (SELECT oid::text FROM pg_namespace WHERE nspname = current_schema())";
const std::string& NotifySql() {
  static const std::string sql = std::string("SELECT pg_notify(") + kChannelSql + ", '')";
  return sql;
}
constexpr int kEmbeddingBatch = 1000;        // rows fetched at a time by ForEachEmbedding
constexpr size_t kMaxCachedTerms = 1 << 16;  // term counts kept by SearchLexical

const char* const kMigrations[] = {
    // 0 -> 1
    R"sql(
CREATE TABLE corpus_documents (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  title       TEXT   NOT NULL,
  source_name TEXT   NOT NULL,
  media_type  TEXT   NOT NULL,
  byte_size   BIGINT NOT NULL,
  sha256      TEXT   NOT NULL UNIQUE,
  created_at  BIGINT NOT NULL
);
CREATE TABLE corpus_document_texts (
  document_id BIGINT PRIMARY KEY REFERENCES corpus_documents(id) ON DELETE CASCADE,
  text        TEXT   NOT NULL
);
CREATE TABLE corpus_chunks (
  id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  document_id  BIGINT  NOT NULL REFERENCES corpus_documents(id) ON DELETE CASCADE,
  ordinal      INTEGER NOT NULL,
  text         TEXT    NOT NULL,
  start_offset BIGINT  NOT NULL,
  end_offset   BIGINT  NOT NULL,
  token_count  INTEGER NOT NULL,
  heading      TEXT    NOT NULL DEFAULT '',
  embedding    BYTEA,
  language     TEXT    NOT NULL,
  tsv          TSVECTOR NOT NULL,
  UNIQUE (document_id, ordinal)
);
CREATE INDEX corpus_chunks_tsv ON corpus_chunks USING GIN (tsv);
CREATE TABLE corpus_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE corpus_changes (
  seq      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  chunk_id BIGINT NOT NULL,
  op       TEXT   NOT NULL CHECK (op IN ('add', 'remove', 'embed'))
);
)sql",
};
constexpr int kLatest = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));

// The search vector of a chunk: $text and $heading under configuration $cfg.
std::string TsvExpression(const std::string& cfg, const std::string& text, const std::string& heading) {
  return "setweight(to_tsvector(" + cfg + "::regconfig, " + text + "), 'A') || setweight(to_tsvector(" + cfg +
         "::regconfig, " + heading + "), 'B')";
}

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

std::string Chomp(const char* message) {
  std::string out = message != nullptr ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// One statement parameter: text, or binary bytes (BYTEA); NULL when null.
struct Param {
  std::string value;
  bool binary = false;
  bool null = false;
  static Param Int(int64_t v) { return {std::to_string(v)}; }
  static Param Text(std::string_view v) { return {std::string(v)}; }
  static Param Floats(const std::vector<float>& v) {
    if (v.empty()) return {{}, false, true};
    return {std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)), true};
  }
};

class Conn {
 public:
  explicit Conn(PGconn* conn) : conn_(conn) {}
  ~Conn() { PQfinish(conn_); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  static Result<std::unique_ptr<Conn>> Open(const std::string& url) {
    // As for the accounts: give up after 10 s unless the URL says otherwise.
    const char* const keywords[] = {"connect_timeout", "dbname", nullptr};
    const char* const values[] = {"10", url.c_str(), nullptr};
    PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
    if (conn == nullptr) return Status::Internal("postgres: out of memory");
    auto out = std::make_unique<Conn>(conn);
    if (PQstatus(conn) != CONNECTION_OK)
      return Status::Unavailable("cannot connect to the corpus database: " + Chomp(PQerrorMessage(conn)));
    PQsetNoticeProcessor(
        conn, [](void*, const char*) {}, nullptr);  // notices (stop-word queries...) are not errors
    return out;
  }

  PGconn* raw() const { return conn_; }

  // Runs `sql` with $1.. bound to `params`; rows come back as text.
  Result<PgResult> Query(const std::string& sql, std::span<const Param> params = {}) {
    RAGD_RETURN_IF_ERROR(Connected());
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size()), formats(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].binary && params[i].value.find('\0') != std::string::npos)
        return Status::InvalidArgument("text with a NUL character cannot be stored");
      values[i] = params[i].null ? nullptr : params[i].value.c_str();
      lengths[i] = static_cast<int>(params[i].value.size());
      formats[i] = params[i].binary ? 1 : 0;
    }
    // Without parameters, PQexec: it runs several statements (migrations).
    PgResult result(params.empty() ? PQexec(conn_, sql.c_str())
                                   : PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()),
                                                  nullptr, values.data(), lengths.data(), formats.data(), 0));
    const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
    return Error(result.get());
  }
  Status Exec(const std::string& sql, std::span<const Param> params = {}) {
    auto result = Query(sql, params);
    return result.ok() ? Status::Ok() : result.status();
  }
  Result<int64_t> QueryInt(const std::string& sql, std::span<const Param> params = {}) {
    auto result = Query(sql, params);
    if (!result.ok()) return result.status();
    if (PQntuples(result->get()) < 1 || PQgetisnull(result->get(), 0, 0)) return int64_t{0};
    return std::strtoll(PQgetvalue(result->get(), 0, 0), nullptr, 10);
  }

  // A connection lost since its last use (server restart, network) is opened again.
  Status Connected() {
    if (PQstatus(conn_) == CONNECTION_OK && !lost_) return Status::Ok();
    lost_ = false;
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) return Status::Ok();
    return Unreachable(Chomp(PQerrorMessage(conn_)));
  }

 private:
  static Status Unreachable(const std::string& detail) {
    std::fprintf(stderr, "ragd: the corpus database is unreachable: %s\n", detail.c_str());
    return Status::Unavailable("the corpus database is unreachable; try again");
  }

  // Bad data (SQLSTATE class 22: invalid UTF-8, out of range) is the
  // caller's; a lost connection Unavailable; the rest an I/O error.
  Status Error(const PGresult* result) {
    std::string message =
        "corpus database: " + Chomp(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
    const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const std::string_view sqlstate = state != nullptr ? state : "";
    if (sqlstate.starts_with("22")) return Status::InvalidArgument(std::move(message));
    if (PQstatus(conn_) != CONNECTION_OK || sqlstate.empty() || sqlstate.starts_with("08") ||
        sqlstate.starts_with("57P")) {
      lost_ = true;
      return Unreachable(message);
    }
    return Status::IoError(std::move(message));
  }

  PGconn* conn_;
  bool lost_ = false;
};

// A transaction on `conn`, rolled back unless committed.
class Txn {
 public:
  Txn(Conn& conn, const char* begin) : conn_(conn) {
    status_ = conn_.Exec(begin);
    open_ = status_.ok();
  }
  ~Txn() {
    if (open_) (void)conn_.Exec("ROLLBACK");
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
  const Status& status() const { return status_; }
  Status Commit() {
    open_ = false;
    return conn_.Exec("COMMIT");
  }

 private:
  Conn& conn_;
  Status status_;
  bool open_ = false;
};

const char* Value(const PgResult& r, int row, int col) { return PQgetvalue(r.get(), row, col); }
int64_t IntAt(const PgResult& r, int row, int col) { return std::strtoll(Value(r, row, col), nullptr, 10); }
std::string TextAt(const PgResult& r, int row, int col) {
  return std::string(Value(r, row, col), static_cast<size_t>(PQgetlength(r.get(), row, col)));
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0;
}

// A BYTEA column in text form ("\x" and hex digits) decoded into floats.
void FloatsAt(const PgResult& r, int row, int col, std::vector<float>& out) {
  out.clear();
  if (PQgetisnull(r.get(), row, col)) return;
  const char* hex = Value(r, row, col);
  const size_t length = static_cast<size_t>(PQgetlength(r.get(), row, col));
  if (length < 2 || hex[0] != '\\' || hex[1] != 'x') return;
  const size_t bytes = (length - 2) / 2;
  out.resize(bytes / sizeof(float));
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  for (size_t i = 0; i < out.size() * sizeof(float); ++i)
    dst[i] = static_cast<unsigned char>(HexDigit(hex[2 + 2 * i]) << 4 | HexDigit(hex[3 + 2 * i]));
}

// A bigint[] literal for `= ANY($n::bigint[])`.
std::string IdArray(std::span<const int64_t> ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

// A text[] literal: every element double-quoted, '"' and '\\' escaped.
std::string TextArray(std::span<const std::string_view> items) {
  std::string out = "{";
  for (std::string_view item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

constexpr const char* kDocumentColumns =
    "d.id, d.title, d.source_name, d.media_type, d.byte_size, d.sha256, d.created_at, "
    "(SELECT COUNT(*) FROM corpus_chunks c WHERE c.document_id = d.id)";
constexpr const char* kChunkColumns =
    "c.id, c.document_id, d.title, c.ordinal, c.text, c.start_offset, c.end_offset, c.token_count, c.heading";

DocumentInfo DocumentAt(const PgResult& r, int row) {
  DocumentInfo info;
  info.id = IntAt(r, row, 0);
  info.title = TextAt(r, row, 1);
  info.source_name = TextAt(r, row, 2);
  info.media_type = TextAt(r, row, 3);
  info.byte_size = IntAt(r, row, 4);
  info.sha256 = TextAt(r, row, 5);
  info.created_at = IntAt(r, row, 6);
  info.chunk_count = IntAt(r, row, 7);
  return info;
}

// A chunk from kChunkColumns, then (when asked) the embedding in column 9.
ChunkRecord ChunkAt(const PgResult& r, int row, bool with_embedding) {
  ChunkRecord c;
  c.id = IntAt(r, row, 0);
  c.document_id = IntAt(r, row, 1);
  c.document_title = TextAt(r, row, 2);
  c.ordinal = static_cast<int>(IntAt(r, row, 3));
  c.text = TextAt(r, row, 4);
  c.start = IntAt(r, row, 5);
  c.end = IntAt(r, row, 6);
  c.token_count = static_cast<int>(IntAt(r, row, 7));
  c.heading_context = TextAt(r, row, 8);
  if (with_embedding) FloatsAt(r, row, 9, c.embedding);
  return c;
}

std::string ChunkSelect(bool with_embeddings) {
  return std::string("SELECT ") + kChunkColumns + (with_embeddings ? ", c.embedding" : "") +
         " FROM corpus_chunks c JOIN corpus_documents d ON d.id = c.document_id ";
}

Status Migrate(Conn& conn) {
  Txn txn(conn, "BEGIN");
  RAGD_RETURN_IF_ERROR(txn.status());
  RAGD_RETURN_IF_ERROR(conn.Exec("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLockKey) + ")"));
  RAGD_RETURN_IF_ERROR(
      conn.Exec("CREATE TABLE IF NOT EXISTS corpus_schema_version (version INTEGER NOT NULL)"));
  auto rows = conn.QueryInt("SELECT COUNT(*) FROM corpus_schema_version");
  if (!rows.ok()) return rows.status();
  if (*rows == 0) RAGD_RETURN_IF_ERROR(conn.Exec("INSERT INTO corpus_schema_version (version) VALUES (0)"));
  auto version = conn.QueryInt("SELECT version FROM corpus_schema_version");
  if (!version.ok()) return version.status();
  if (*version > kLatest || *version < 0) {
    return Status::Unsupported("corpus database has schema version " + std::to_string(*version) +
                               "; this build knows up to " + std::to_string(kLatest));
  }
  for (int64_t v = *version; v < kLatest; ++v) RAGD_RETURN_IF_ERROR(conn.Exec(kMigrations[v]));
  if (*version != kLatest) {
    const Param latest[] = {Param::Int(kLatest)};
    RAGD_RETURN_IF_ERROR(conn.Exec("UPDATE corpus_schema_version SET version = $1::integer", latest));
  }
  return txn.Commit();
}

class PostgresStore final : public Store {
 public:
  PostgresStore(StoreOptions options, std::unique_ptr<Conn> writer)
      : options_(std::move(options)), writer_(std::move(writer)) {}

  Result<AddResult> AddDocument(const NewDocument& doc) override;
  Result<DocumentInfo> GetDocument(DocumentId id) const override;
  Result<std::optional<DocumentInfo>> FindDocumentBySha256(std::string_view sha256_hex) const override;
  Result<std::vector<DocumentInfo>> ListDocuments(int64_t offset, int64_t limit) const override;
  Result<std::string> GetDocumentText(DocumentId id) const override;
  Result<std::vector<ChunkId>> DeleteDocument(DocumentId id) override;
  Result<ReplacedChunks> ReplaceChunks(DocumentId id, std::span<const NewChunk> chunks) override;
  Result<std::vector<ChunkRecord>> GetChunks(std::span<const ChunkId> ids,
                                             bool with_embeddings) const override;
  Result<std::vector<ChunkRecord>> ListChunks(DocumentId id, bool with_embeddings) const override;
  Status ForEachEmbedding(const std::function<bool(const EmbeddingRow&)>& fn) const override;
  Status ReplaceEmbeddings(std::span<const std::pair<ChunkId, std::vector<float>>> rows) override;
  Result<int> EmbeddingDim() const override;
  Result<int64_t> CountChunks() const override { return ReadInt("SELECT COUNT(*) FROM corpus_chunks"); }
  Result<int64_t> CountDocuments() const override { return ReadInt("SELECT COUNT(*) FROM corpus_documents"); }
  Result<std::vector<LexicalHit>> SearchLexical(std::string_view query, int top_k,
                                                std::span<const DocumentId> only_documents) const override;
  Result<int> SchemaVersion() const override {
    auto v = ReadInt("SELECT version FROM corpus_schema_version");
    if (!v.ok()) return v.status();
    return static_cast<int>(*v);
  }
  Status CheckIntegrity() const override;
  Result<int64_t> LastChange() const override {
    return ReadInt("SELECT COALESCE(MAX(seq), 0) FROM corpus_changes");
  }
  Result<std::vector<Change>> ChangesSince(int64_t seq, int limit) const override;
  Result<bool> WaitForChange(int timeout_ms) const override;

 private:
  // A reader connection borrowed for one call; back to the pool afterwards.
  class Reader {
   public:
    Reader(const PostgresStore* store, std::unique_ptr<Conn> conn) : store_(store), conn_(std::move(conn)) {}
    Reader(Reader&&) = default;
    ~Reader() {
      if (!conn_) return;
      std::lock_guard lock(store_->pool_mu_);
      if (static_cast<int>(store_->idle_.size()) < store_->options_.max_idle_readers)
        store_->idle_.push_back(std::move(conn_));
    }
    Conn& conn() { return *conn_; }

   private:
    const PostgresStore* store_;
    std::unique_ptr<Conn> conn_;
  };

  Result<Reader> Borrow() const {
    {
      std::lock_guard lock(pool_mu_);
      if (!idle_.empty()) {
        auto conn = std::move(idle_.back());
        idle_.pop_back();
        return Reader(this, std::move(conn));
      }
    }
    auto conn = Conn::Open(options_.postgres_url);
    if (!conn.ok()) return conn.status();
    return Reader(this, std::move(*conn));
  }

  // The document whose `column` (a fixed column name) equals `value`; nullopt when none.
  Result<std::optional<DocumentInfo>> FindDocument(const char* column, const Param& value) const;

  Result<int64_t> ReadInt(const std::string& sql, std::span<const Param> params = {}) const {
    auto reader = Borrow();
    if (!reader.ok()) return reader.status();
    return reader->conn().QueryInt(sql, params);
  }

  // The writer's transaction, after the lock all writers take turns on.
  static Status BeginWrite(Conn& conn, Txn& txn) {
    RAGD_RETURN_IF_ERROR(txn.status());
    return conn.Exec("SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLockKey) + ")");
  }
  // Appends `op` for every chunk of document `id` and notifies the replicas.
  static Status LogDocumentChunks(Conn& conn, DocumentId id, const char* op) {
    const Param params[] = {Param::Int(id), Param::Text(op)};
    RAGD_RETURN_IF_ERROR(conn.Exec(
        "INSERT INTO corpus_changes (chunk_id, op) SELECT id, $2 FROM corpus_chunks WHERE document_id = $1 "
        "ORDER BY ordinal",
        params));
    return conn.Exec(NotifySql());
  }
  static Status RequireDocument(Conn& conn, DocumentId id) {
    const Param params[] = {Param::Int(id)};
    auto found = conn.QueryInt("SELECT COUNT(*) FROM corpus_documents WHERE id = $1", params);
    if (!found.ok()) return found.status();
    return *found > 0 ? Status::Ok() : NotFoundDocument(id);
  }
  static Result<std::vector<ChunkId>> ChunkIdsOf(Conn& conn, DocumentId id) {
    const Param params[] = {Param::Int(id)};
    auto rows = conn.Query("SELECT id FROM corpus_chunks WHERE document_id = $1 ORDER BY ordinal", params);
    if (!rows.ok()) return rows.status();
    std::vector<ChunkId> out;
    for (int i = 0; i < PQntuples(rows->get()); ++i) out.push_back(IntAt(*rows, i, 0));
    return out;
  }
  static Result<int> ReadDim(Conn& conn) {
    auto dim = conn.QueryInt("SELECT value::bigint FROM corpus_meta WHERE key = 'embedding_dim'");
    if (!dim.ok()) return dim.status();
    return static_cast<int>(*dim);
  }
  static Status WriteDim(Conn& conn, int dim) {
    const Param params[] = {Param::Text(std::to_string(dim))};
    return conn.Exec(
        "INSERT INTO corpus_meta (key, value) VALUES ('embedding_dim', $1) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        params);
  }
  // Inserts `chunks` as ordinals 0..n-1 of document `id` inside the
  // caller's transaction; sets the embedding size on the first embedding.
  static Result<std::vector<ChunkId>> InsertChunks(Conn& conn, DocumentId id,
                                                   std::span<const NewChunk> chunks);

  // About how many chunks the store holds (the statistics system's count).
  static Result<int64_t> EstimateRows(Conn& conn);
  // How many chunks hold a term (its tsquery), counted once and cached until
  // the store's size has halved or doubled: a stale count only shifts a
  // weight a little, or which terms count as common.
  Result<int64_t> ChunksHolding(Conn& conn, const std::string& query, int64_t rows) const;

  StoreOptions options_;
  mutable std::mutex holding_mu_;
  // tsquery -> (chunks holding it, store size when counted); guarded by holding_mu_
  mutable std::unordered_map<std::string, std::pair<int64_t, int64_t>> holding_;
  std::mutex write_mu_;
  std::unique_ptr<Conn> writer_;  // guarded by write_mu_
  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<Conn>> idle_;  // guarded by pool_mu_
  mutable std::mutex listen_mu_;
  mutable std::unique_ptr<Conn> listener_;  // guarded by listen_mu_; LISTENs on the channel of kChannelSql
};

Result<std::vector<ChunkId>> PostgresStore::InsertChunks(Conn& conn, DocumentId id,
                                                         std::span<const NewChunk> chunks) {
  std::vector<ChunkId> ids;
  if (chunks.empty()) return ids;
  auto stored_dim = ReadDim(conn);
  if (!stored_dim.ok()) return stored_dim.status();
  int dim = *stored_dim;
  const bool had_dim = dim != 0;
  // One statement for all the chunks (one round trip, not one per chunk):
  // their columns as arrays, the embeddings end to end in one BYTEA that
  // each row takes its slice of.
  std::vector<std::string_view> texts, headings, languages;
  std::vector<int64_t> starts, ends, tokens, dims, offsets;
  std::string embeddings;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const NewChunk& c = chunks[i];
    RAGD_RETURN_IF_ERROR(CheckChunkEmbedding(i, c.embedding, dim));
    texts.push_back(c.text);
    headings.push_back(c.heading_context);
    languages.push_back(TextSearchConfig(c.text));
    starts.push_back(c.start);
    ends.push_back(c.end);
    tokens.push_back(c.token_count);
    dims.push_back(static_cast<int64_t>(c.embedding.size()));
    offsets.push_back(static_cast<int64_t>(embeddings.size()));
    embeddings.append(reinterpret_cast<const char*>(c.embedding.data()), c.embedding.size() * sizeof(float));
  }
  const Param params[] = {Param::Int(id),
                          Param::Text(TextArray(texts)),
                          Param::Text(IdArray(starts)),
                          Param::Text(IdArray(ends)),
                          Param::Text(IdArray(tokens)),
                          Param::Text(TextArray(headings)),
                          Param::Text(TextArray(languages)),
                          Param::Text(IdArray(dims)),
                          Param::Text(IdArray(offsets)),
                          Param{embeddings, true}};
  auto rows = conn.Query(
      "INSERT INTO corpus_chunks (document_id, ordinal, text, start_offset, end_offset, token_count, "
      "heading, "
      "embedding, language, tsv) SELECT $1, c.n - 1, c.text, c.s, c.e, c.tokens, c.heading, CASE WHEN c.dim "
      "= 0 "
      "THEN NULL ELSE substring($10::bytea FROM c.off + 1 FOR c.dim * 4) END, c.language, " +
          TsvExpression("c.language", "c.text", "c.heading") +
          " FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::integer[], $6::text[], $7::text[], "
          "$8::integer[], $9::integer[]) WITH ORDINALITY AS c(text, s, e, tokens, heading, language, dim, "
          "off, n) "
          "ORDER BY c.n RETURNING ordinal, id",
      params);
  if (!rows.ok()) return rows.status();
  ids.resize(chunks.size());
  for (int i = 0; i < PQntuples(rows->get()); ++i) {
    const int64_t ordinal = IntAt(*rows, i, 0);
    if (ordinal < 0 || ordinal >= static_cast<int64_t>(ids.size()))
      return Status::Internal("corpus database: chunk insert returned ordinal " + std::to_string(ordinal));
    ids[static_cast<size_t>(ordinal)] = IntAt(*rows, i, 1);
  }
  if (!had_dim && dim != 0) RAGD_RETURN_IF_ERROR(WriteDim(conn, dim));
  return ids;
}

Result<AddResult> PostgresStore::AddDocument(const NewDocument& doc) {
  const std::string sha = NormalizeSha256(doc.sha256);
  if (sha.empty()) return Status::InvalidArgument("document sha256 must be 64 hex characters");
  RAGD_RETURN_IF_ERROR(ValidateChunks(doc.text, doc.chunks));
  std::lock_guard lock(write_mu_);
  Conn& conn = *writer_;
  Txn txn(conn, "BEGIN");
  RAGD_RETURN_IF_ERROR(BeginWrite(conn, txn));
  AddResult result;
  {
    const Param params[] = {Param::Text(sha)};
    auto found = conn.Query("SELECT id FROM corpus_documents WHERE sha256 = $1", params);
    if (!found.ok()) return found.status();
    if (PQntuples(found->get()) > 0) {
      result.id = IntAt(*found, 0, 0);
      return result;  // rolled back: nothing was written
    }
  }
  {
    const Param params[] = {Param::Text(doc.title),
                            Param::Text(doc.source_name),
                            Param::Text(doc.media_type),
                            Param::Int(doc.byte_size),
                            Param::Text(sha),
                            Param::Int(static_cast<int64_t>(std::time(nullptr)))};
    auto id = conn.QueryInt(
        "INSERT INTO corpus_documents (title, source_name, media_type, byte_size, sha256, created_at) "
        "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        params);
    if (!id.ok()) return id.status();
    result.id = *id;
  }
  {
    const Param params[] = {Param::Int(result.id), Param::Text(doc.text)};
    RAGD_RETURN_IF_ERROR(
        conn.Exec("INSERT INTO corpus_document_texts (document_id, text) VALUES ($1, $2)", params));
  }
  auto chunk_ids = InsertChunks(conn, result.id, doc.chunks);
  if (!chunk_ids.ok()) return chunk_ids.status();
  result.chunk_ids = std::move(*chunk_ids);
  RAGD_RETURN_IF_ERROR(LogDocumentChunks(conn, result.id, "add"));
  RAGD_RETURN_IF_ERROR(txn.Commit());
  result.inserted = true;
  return result;
}

Result<std::optional<DocumentInfo>> PostgresStore::FindDocument(const char* column,
                                                                const Param& value) const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  const Param params[] = {value};
  auto rows = reader->conn().Query(
      std::string("SELECT ") + kDocumentColumns + " FROM corpus_documents d WHERE d." + column + " = $1",
      params);
  if (!rows.ok()) return rows.status();
  if (PQntuples(rows->get()) == 0) return std::optional<DocumentInfo>();
  return std::optional<DocumentInfo>(DocumentAt(*rows, 0));
}

Result<DocumentInfo> PostgresStore::GetDocument(DocumentId id) const {
  auto found = FindDocument("id", Param::Int(id));
  if (!found.ok()) return found.status();
  if (!*found) return NotFoundDocument(id);
  return std::move(**found);
}

Result<std::optional<DocumentInfo>> PostgresStore::FindDocumentBySha256(std::string_view sha256_hex) const {
  const std::string sha = NormalizeSha256(sha256_hex);
  if (sha.empty()) return Status::InvalidArgument("sha256 must be 64 hex characters");
  return FindDocument("sha256", Param::Text(sha));
}

Result<std::vector<DocumentInfo>> PostgresStore::ListDocuments(int64_t offset, int64_t limit) const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  // LIMIT NULL is no limit.
  const Param params[] = {limit < 0 ? Param{{}, false, true} : Param::Int(limit),
                          Param::Int(std::max<int64_t>(offset, 0))};
  auto rows =
      reader->conn().Query(std::string("SELECT ") + kDocumentColumns +
                               " FROM corpus_documents d ORDER BY d.id DESC LIMIT $1::bigint OFFSET $2",
                           params);
  if (!rows.ok()) return rows.status();
  std::vector<DocumentInfo> out;
  for (int i = 0; i < PQntuples(rows->get()); ++i) out.push_back(DocumentAt(*rows, i));
  return out;
}

Result<std::string> PostgresStore::GetDocumentText(DocumentId id) const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  const Param params[] = {Param::Int(id)};
  auto rows = reader->conn().Query("SELECT text FROM corpus_document_texts WHERE document_id = $1", params);
  if (!rows.ok()) return rows.status();
  if (PQntuples(rows->get()) == 0) return NotFoundDocument(id);
  return TextAt(*rows, 0, 0);
}

Result<std::vector<ChunkId>> PostgresStore::DeleteDocument(DocumentId id) {
  std::lock_guard lock(write_mu_);
  Conn& conn = *writer_;
  Txn txn(conn, "BEGIN");
  RAGD_RETURN_IF_ERROR(BeginWrite(conn, txn));
  RAGD_RETURN_IF_ERROR(RequireDocument(conn, id));
  auto removed = ChunkIdsOf(conn, id);
  if (!removed.ok()) return removed.status();
  RAGD_RETURN_IF_ERROR(LogDocumentChunks(conn, id, "remove"));
  const Param params[] = {Param::Int(id)};
  RAGD_RETURN_IF_ERROR(conn.Exec("DELETE FROM corpus_documents WHERE id = $1", params));  // cascades
  RAGD_RETURN_IF_ERROR(txn.Commit());
  return removed;
}

Result<ReplacedChunks> PostgresStore::ReplaceChunks(DocumentId id, std::span<const NewChunk> chunks) {
  std::lock_guard lock(write_mu_);
  Conn& conn = *writer_;
  Txn txn(conn, "BEGIN");
  RAGD_RETURN_IF_ERROR(BeginWrite(conn, txn));
  RAGD_RETURN_IF_ERROR(RequireDocument(conn, id));
  const Param params[] = {Param::Int(id)};
  auto text = conn.Query("SELECT text FROM corpus_document_texts WHERE document_id = $1", params);
  if (!text.ok()) return text.status();
  RAGD_RETURN_IF_ERROR(
      ValidateChunks(PQntuples(text->get()) > 0 ? TextAt(*text, 0, 0) : std::string(), chunks));
  ReplacedChunks result;
  auto removed = ChunkIdsOf(conn, id);
  if (!removed.ok()) return removed.status();
  result.removed = std::move(*removed);
  RAGD_RETURN_IF_ERROR(LogDocumentChunks(conn, id, "remove"));
  RAGD_RETURN_IF_ERROR(conn.Exec("DELETE FROM corpus_chunks WHERE document_id = $1", params));
  auto added = InsertChunks(conn, id, chunks);
  if (!added.ok()) return added.status();
  result.added = std::move(*added);
  RAGD_RETURN_IF_ERROR(LogDocumentChunks(conn, id, "add"));
  RAGD_RETURN_IF_ERROR(txn.Commit());
  return result;
}

Result<std::vector<ChunkRecord>> PostgresStore::GetChunks(std::span<const ChunkId> ids,
                                                          bool with_embeddings) const {
  std::vector<ChunkRecord> out;
  if (ids.empty()) return out;
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  const Param params[] = {Param::Text(IdArray(ids))};
  // One statement: every chunk from the same snapshot.
  auto rows = reader->conn().Query(ChunkSelect(with_embeddings) + "WHERE c.id = ANY($1::bigint[])", params);
  if (!rows.ok()) return rows.status();
  std::unordered_map<ChunkId, int> row_of;
  for (int i = 0; i < PQntuples(rows->get()); ++i) row_of[IntAt(*rows, i, 0)] = i;
  for (ChunkId id : ids) {
    if (auto it = row_of.find(id); it != row_of.end())
      out.push_back(ChunkAt(*rows, it->second, with_embeddings));
  }
  return out;
}

Result<std::vector<ChunkRecord>> PostgresStore::ListChunks(DocumentId id, bool with_embeddings) const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  Conn& conn = reader->conn();
  Txn txn(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  RAGD_RETURN_IF_ERROR(txn.status());
  RAGD_RETURN_IF_ERROR(RequireDocument(conn, id));
  const Param params[] = {Param::Int(id)};
  auto rows =
      conn.Query(ChunkSelect(with_embeddings) + "WHERE c.document_id = $1 ORDER BY c.ordinal", params);
  if (!rows.ok()) return rows.status();
  std::vector<ChunkRecord> out;
  for (int i = 0; i < PQntuples(rows->get()); ++i) out.push_back(ChunkAt(*rows, i, with_embeddings));
  RAGD_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Status PostgresStore::ForEachEmbedding(const std::function<bool(const EmbeddingRow&)>& fn) const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  Conn& conn = reader->conn();
  // A cursor in one snapshot, read in batches: the whole corpus's
  // embeddings need not fit in one result.
  Txn txn(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  RAGD_RETURN_IF_ERROR(txn.status());
  RAGD_RETURN_IF_ERROR(conn.Exec(
      "DECLARE corpus_embeddings NO SCROLL CURSOR FOR SELECT id, document_id, embedding FROM corpus_chunks "
      "WHERE embedding IS NOT NULL ORDER BY id"));
  std::vector<float> buffer;
  for (;;) {
    auto rows = conn.Query("FETCH " + std::to_string(kEmbeddingBatch) + " FROM corpus_embeddings");
    if (!rows.ok()) return rows.status();
    const int n = PQntuples(rows->get());
    for (int i = 0; i < n; ++i) {
      FloatsAt(*rows, i, 2, buffer);
      if (!fn(EmbeddingRow{IntAt(*rows, i, 0), IntAt(*rows, i, 1), std::span<const float>(buffer)}))
        return txn.Commit();
    }
    if (n < kEmbeddingBatch) return txn.Commit();
  }
}

Status PostgresStore::ReplaceEmbeddings(std::span<const std::pair<ChunkId, std::vector<float>>> rows) {
  auto checked = ReplacementDim(rows);
  if (!checked.ok()) return checked.status();
  const size_t dim = *checked;
  if (dim == 0) return Status::Ok();
  std::lock_guard lock(write_mu_);
  Conn& conn = *writer_;
  Txn txn(conn, "BEGIN");
  RAGD_RETURN_IF_ERROR(BeginWrite(conn, txn));
  auto stored_dim = ReadDim(conn);
  if (!stored_dim.ok()) return stored_dim.status();
  if (*stored_dim != static_cast<int>(dim)) {
    RAGD_RETURN_IF_ERROR(
        conn.Exec("INSERT INTO corpus_changes (chunk_id, op) SELECT id, 'remove' FROM corpus_chunks "
                  "WHERE embedding IS NOT NULL ORDER BY id"));
    RAGD_RETURN_IF_ERROR(conn.Exec("UPDATE corpus_chunks SET embedding = NULL"));
    RAGD_RETURN_IF_ERROR(WriteDim(conn, static_cast<int>(dim)));
  }
  for (const auto& [id, v] : rows) {
    const Param params[] = {Param::Int(id), Param::Floats(v)};
    auto updated = conn.Query(
        "WITH u AS (UPDATE corpus_chunks SET embedding = $2::bytea WHERE id = $1 RETURNING id) "
        "INSERT INTO corpus_changes (chunk_id, op) SELECT id, 'embed' FROM u",
        params);
    if (!updated.ok()) return updated.status();
    if (std::strtoll(PQcmdTuples(updated->get()), nullptr, 10) != 1) return NotFoundChunk(id);
  }
  RAGD_RETURN_IF_ERROR(conn.Exec(NotifySql()));
  return txn.Commit();
}

Result<int> PostgresStore::EmbeddingDim() const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  return ReadDim(reader->conn());
}

Result<std::vector<LexicalHit>> PostgresStore::SearchLexical(
    std::string_view query, int top_k, std::span<const DocumentId> only_documents) const {
  std::vector<LexicalHit> hits;
  if (top_k <= 0) return hits;
  // The same terms as on SQLite (syntax dropped, English function words
  // dropped). A term holds only letters, digits and non-ASCII bytes: in an
  // array literal nothing in it needs escaping, and neither does a lexeme
  // made from it (inside quotes of a tsquery, or of an array literal).
  const std::vector<std::string> terms = FtsTerms(RepairUtf8(query));
  if (terms.empty()) return hits;
  std::string array = "{";
  for (const std::string& term : terms) array += (array.size() > 1 ? ",\"" : "\"") + term + '"';
  array += '}';
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  Conn& conn = reader->conn();

  // Each term's lexemes under every configuration, each once, OR-ed into a
  // tsquery (none for a term without lexemes). The configurations share
  // most lexemes of most words: OR-ing their own queries would repeat them,
  // and matching and ranking cost grows with the query. The queries travel
  // back as parameters so that the planner sees them (the GIN index for
  // rare lexemes, a scan for common ones).
  std::string vectors;
  for (const char* cfg : TextSearchConfigs()) {
    if (!vectors.empty()) vectors += " || ";
    vectors += std::string("to_tsvector('") + cfg + "', w)";
  }
  const Param term_params[] = {Param::Text(array)};
  auto per_term =
      conn.Query("SELECT (SELECT string_agg(quote_literal(l), ' | ') FROM unnest(tsvector_to_array(" +
                     vectors + ")) l) FROM unnest($1::text[]) w",
                 term_params);
  if (!per_term.ok()) return per_term.status();
  std::vector<std::string> queries;  // one per term with lexemes
  for (int i = 0; i < PQntuples(per_term->get()); ++i) {
    if (!PQgetisnull(per_term->get(), i, 0)) queries.push_back(TextAt(*per_term, i, 0));
  }
  if (queries.empty()) return hits;
  auto join = [](std::span<const std::string> parts, const char* separator, const char* quote) {
    std::string out;
    for (const std::string& part : parts) out += (out.empty() ? "" : separator) + (quote + part + quote);
    return out;
  };

  // Each term's weight is its IDF, ln(1 + (N + 1) / (n + 0.5)) with n of
  // the N chunks holding it: > 0, and higher for rarer terms, as in BM25.
  auto rows = EstimateRows(conn);
  if (!rows.ok()) return rows.status();
  std::vector<int64_t> holding(queries.size());
  std::string weights = "{";
  for (size_t i = 0; i < queries.size(); ++i) {
    auto n = ChunksHolding(conn, queries[i], *rows);
    if (!n.ok()) return n.status();
    holding[i] = *n;
    const double idf = std::log(1.0 + (static_cast<double>(*rows) + 1.0) / (static_cast<double>(*n) + 0.5));
    weights += (i > 0 ? "," : "") + std::to_string(idf);
  }
  weights += '}';

  // As on SQLite (store.h): on a large store, a question mixing selective
  // and common terms ranks only the chunks holding a selective term (the
  // others hold only terms of low weight), and runs again in full when
  // that finds fewer than top_k.
  std::vector<std::string> selective;
  if (only_documents.empty() && queries.size() >= 2 && *rows >= options_.lexical_prune_from_chunks) {
    for (size_t i = 0; i < queries.size(); ++i) {
      const double fraction = static_cast<double>(holding[i]) / static_cast<double>(*rows);
      if (holding[i] > 0 && fraction < options_.lexical_common_fraction) selective.push_back(queries[i]);
    }
    if (selective.size() == queries.size()) selective.clear();  // no common term: nothing to skip
  }

  // The score: the weights of the query's terms the chunk holds, plus its
  // cover density (ts_rank_cd, text weighing 1.0 and the heading, weight B,
  // 0.5) scaled into [0, 1) by normalization 32. Every hit holds a term,
  // so every score is > 0.
  auto run = [&](bool pruned) -> Status {
    hits.clear();
    std::string sql =
        "SELECT c.id, c.document_id, (SELECT COALESCE(sum(t.w), 0) FROM unnest($3::tsquery[], $4::float8[]) "
        "AS t(q, w) WHERE c.tsv @@ t.q) + ts_rank_cd('{0.1, 0.2, 0.5, 1.0}', c.tsv, $1::tsquery, 32) AS "
        "score "
        "FROM corpus_chunks c WHERE c.tsv @@ $1::tsquery";
    std::vector<Param> params = {Param::Text(join(queries, " | ", "")), Param::Int(top_k),
                                 Param::Text("{" + join(queries, ",", "\"") + "}"), Param::Text(weights)};
    if (pruned) {
      sql += " AND c.tsv @@ $5::tsquery";
      params.push_back(Param::Text(join(selective, " | ", "")));
    } else if (!only_documents.empty()) {
      sql += " AND c.document_id = ANY($5::bigint[])";
      params.push_back(Param::Text(IdArray(only_documents)));
    }
    sql += " ORDER BY score DESC, c.id LIMIT $2";
    auto found = conn.Query(sql, params);
    if (!found.ok()) return found.status();
    for (int i = 0; i < PQntuples(found->get()); ++i)
      hits.push_back({IntAt(*found, i, 0), IntAt(*found, i, 1), std::strtod(Value(*found, i, 2), nullptr)});
    return Status::Ok();
  };
  if (!selective.empty()) {
    RAGD_RETURN_IF_ERROR(run(true));
    if (hits.size() >= static_cast<size_t>(top_k)) return hits;
  }
  RAGD_RETURN_IF_ERROR(run(false));
  return hits;
}

Result<int64_t> PostgresStore::EstimateRows(Conn& conn) {
  auto estimate = conn.QueryInt(
      "SELECT GREATEST(COALESCE((SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = "
      "'corpus_chunks'::regclass), 0), (SELECT reltuples FROM pg_class WHERE oid = "
      "'corpus_chunks'::regclass))::bigint");
  if (!estimate.ok() || *estimate > 0) return estimate;
  // No statistics yet (a new or small table): count.
  return conn.QueryInt("SELECT count(*) FROM corpus_chunks");
}

Result<int64_t> PostgresStore::ChunksHolding(Conn& conn, const std::string& query, int64_t rows) const {
  {
    std::lock_guard lock(holding_mu_);
    if (auto it = holding_.find(query); it != holding_.end()) {
      const auto [n, counted_at] = it->second;
      if (rows <= 2 * counted_at && 2 * rows >= counted_at)
        return n;  // else the store changed much: count again
    }
  }
  const Param params[] = {Param::Text(query)};
  auto n = conn.QueryInt("SELECT count(*) FROM corpus_chunks WHERE tsv @@ $1::tsquery", params);
  if (!n.ok()) return n.status();
  std::lock_guard lock(holding_mu_);
  if (holding_.size() >= kMaxCachedTerms) holding_.clear();  // then it starts over
  holding_[query] = {*n, std::max<int64_t>(rows, 1)};
  return *n;
}

Status PostgresStore::CheckIntegrity() const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  // Each chunk's search vector is what its text and heading make, and its
  // span lies inside its document's text.
  auto bad = reader->conn().Query(
      "SELECT c.id, CASE WHEN t.document_id IS NULL THEN 'has no document text' "
      "WHEN c.end_offset > octet_length(t.text) THEN 'lies outside its document text' "
      "ELSE 'has a stale search vector' END FROM corpus_chunks c "
      "LEFT JOIN corpus_document_texts t ON t.document_id = c.document_id "
      "WHERE t.document_id IS NULL OR c.end_offset > octet_length(t.text) OR c.tsv <> " +
      TsvExpression("c.language", "c.text", "c.heading") + " LIMIT 1");
  if (!bad.ok()) return bad.status();
  if (PQntuples(bad->get()) > 0)
    return Status::Corrupt("corpus store: chunk " + TextAt(*bad, 0, 0) + " " + TextAt(*bad, 0, 1));
  return Status::Ok();
}

Result<std::vector<Change>> PostgresStore::ChangesSince(int64_t seq, int limit) const {
  auto reader = Borrow();
  if (!reader.ok()) return reader.status();
  const Param params[] = {Param::Int(seq), Param::Int(std::max(limit, 0))};
  auto rows = reader->conn().Query(
      "SELECT seq, chunk_id, op FROM corpus_changes WHERE seq > $1 ORDER BY seq LIMIT $2", params);
  if (!rows.ok()) return rows.status();
  std::vector<Change> out;
  for (int i = 0; i < PQntuples(rows->get()); ++i) {
    const std::string_view op = Value(*rows, i, 2);
    out.push_back({IntAt(*rows, i, 0), IntAt(*rows, i, 1),
                   op == "add"      ? Change::Op::kAdd
                   : op == "remove" ? Change::Op::kRemove
                                    : Change::Op::kEmbed});
  }
  return out;
}

Result<bool> PostgresStore::WaitForChange(int timeout_ms) const {
  std::lock_guard lock(listen_mu_);
  if (listener_ == nullptr || PQstatus(listener_->raw()) != CONNECTION_OK) {
    listener_.reset();
    auto conn = Conn::Open(options_.postgres_url);
    if (!conn.ok()) return conn.status();
    auto channel = (*conn)->Query(std::string("SELECT ") + kChannelSql);
    if (!channel.ok()) return channel.status();
    RAGD_RETURN_IF_ERROR((*conn)->Exec("LISTEN " + std::string(Value(*channel, 0, 0))));
    listener_ = std::move(*conn);
    return true;  // changes may have come before LISTEN: the caller reads them
  }
  PGconn* raw = listener_->raw();
  auto take = [&] {
    bool any = false;
    while (PGnotify* n = PQnotifies(raw)) {
      PQfreemem(n);
      any = true;
    }
    return any;
  };
  if (take()) return true;
  pollfd fd{PQsocket(raw), POLLIN, 0};
  const int ready = poll(&fd, 1, timeout_ms);
  if (ready < 0) return false;
  if (ready > 0 && PQconsumeInput(raw) == 0) {
    listener_.reset();  // reopened at the next call
    return true;
  }
  return take();
}

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const StoreOptions& options) {
  auto conn = Conn::Open(options.postgres_url);
  if (!conn.ok()) return conn.status();
  RAGD_RETURN_IF_ERROR(Migrate(**conn));
  return std::unique_ptr<Store>(new PostgresStore(options, std::move(*conn)));
}

}  // namespace ragd::corpus::internal
