// Store on SQLite, with FTS5 for lexical search (see schema.cpp for the
// on-disk format).
#include <bit>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>
#include <utility>

#include "common/text.h"
#include "corpus/fts_rank.h"
#include "corpus/schema.h"
#include "corpus/sqlite_db.h"
#include "corpus/store.h"
#include "corpus/store_common.h"

namespace ragd::corpus {

using internal::Db;
using internal::NormalizeSha256;
using internal::NotFoundDocument;
using internal::Stmt;
using internal::Transaction;
using internal::ValidateChunks;

static_assert(std::endian::native == std::endian::little, "embedding BLOBs are stored little-endian");

namespace {

struct SqliteImpl {
  StoreOptions options;
  // Row lengths for ragd_bm25 (see fts_rank.h); declared before the
  // connections that use it so that it outlives them.
  internal::RowSizeCache row_sizes;
  internal::TermFrequencies term_frequencies;  // for SearchLexical's pruning
  std::mutex write_mu;
  std::unique_ptr<Db> writer;  // guarded by write_mu
  std::mutex pool_mu;
  std::vector<std::unique_ptr<Db>> idle_readers;  // guarded by pool_mu

  // A reader connection borrowed for one call; returned to the pool on destruction.
  class Reader {
   public:
    Reader(SqliteImpl* impl, std::unique_ptr<Db> db) : impl_(impl), db_(std::move(db)) {}
    Reader(Reader&&) = default;
    ~Reader() {
      if (!db_) return;
      std::lock_guard lock(impl_->pool_mu);
      if (static_cast<int>(impl_->idle_readers.size()) < impl_->options.max_idle_readers) {
        impl_->idle_readers.push_back(std::move(db_));
      }
    }
    Db& db() { return *db_; }

   private:
    SqliteImpl* impl_;
    std::unique_ptr<Db> db_;
  };

  Result<Reader> BorrowReader() {
    {
      std::lock_guard lock(pool_mu);
      if (!idle_readers.empty()) {
        auto db = std::move(idle_readers.back());
        idle_readers.pop_back();
        return Reader(this, std::move(db));
      }
    }
    auto db = Db::Open(options.path, options.busy_timeout_ms);
    if (!db.ok()) return db.status();
    RAGD_RETURN_IF_ERROR(internal::CreateTermTable(**db));
    RAGD_RETURN_IF_ERROR((*db)->Exec("PRAGMA query_only = ON"));
    RAGD_RETURN_IF_ERROR(internal::RegisterBm25(**db, &row_sizes));
    return Reader(this, std::move(db).value());
  }
};

constexpr const char* kDocumentColumns =
    "d.id, d.title, d.source_name, d.media_type, d.byte_size, d.sha256, d.created_at, "
    "(SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id)";

constexpr const char* kChunkColumns =
    "c.id, c.document_id, d.title, c.ordinal, c.text, c.start_offset, c.end_offset, c.token_count, "
    "c.heading, c.embedding";

DocumentInfo ReadDocument(const Stmt& s) {
  DocumentInfo info;
  info.id = s.ColumnInt(0);
  info.title = s.ColumnText(1);
  info.source_name = s.ColumnText(2);
  info.media_type = s.ColumnText(3);
  info.byte_size = s.ColumnInt(4);
  info.sha256 = s.ColumnText(5);
  info.created_at = s.ColumnInt(6);
  info.chunk_count = s.ColumnInt(7);
  return info;
}

std::vector<float> BlobToFloats(std::span<const uint8_t> blob) {
  std::vector<float> out(blob.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), blob.data(), out.size() * sizeof(float));
  return out;
}

ChunkRecord ReadChunk(const Stmt& s, bool with_embedding) {
  ChunkRecord c;
  c.id = s.ColumnInt(0);
  c.document_id = s.ColumnInt(1);
  c.document_title = s.ColumnText(2);
  c.ordinal = static_cast<int>(s.ColumnInt(3));
  c.text = s.ColumnText(4);
  c.start = s.ColumnInt(5);
  c.end = s.ColumnInt(6);
  c.token_count = static_cast<int>(s.ColumnInt(7));
  c.heading_context = s.ColumnText(8);
  if (with_embedding) c.embedding = BlobToFloats(s.ColumnBlob(9));
  return c;
}

// Reads meta 'embedding_dim' (0 when unset).
Result<int> ReadEmbeddingDim(Db& db) {
  auto stmt = db.Prepare("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'embedding_dim'");
  if (!stmt.ok()) return stmt.status();
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  return *row ? static_cast<int>(stmt->ColumnInt(0)) : 0;
}

Status WriteEmbeddingDim(Db& db, int dim) {
  auto stmt = db.Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('embedding_dim', ?1)");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, std::to_string(dim));
  return stmt->Run();
}

Status RequireDocument(Db& db, DocumentId id) {
  auto exists = db.Prepare("SELECT 1 FROM documents WHERE id = ?1");
  if (!exists.ok()) return exists.status();
  exists->BindInt(1, id);
  auto row = exists->Step();
  if (!row.ok()) return row.status();
  return *row ? Status::Ok() : NotFoundDocument(id);
}

Result<std::vector<ChunkId>> ChunkIdsOf(Db& db, DocumentId id) {
  std::vector<ChunkId> out;
  auto ids = db.Prepare("SELECT id FROM chunks WHERE document_id = ?1 ORDER BY ordinal");
  if (!ids.ok()) return ids.status();
  ids->BindInt(1, id);
  for (;;) {
    auto row = ids->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ids->ColumnInt(0));
  }
}

// Inserts `chunks` as ordinals 0..n-1 of document `id` inside the caller's
// transaction (the FTS rows follow by trigger); sets the store's embedding
// size on the first embedding ever stored. Returns the new chunk ids.
Result<std::vector<ChunkId>> InsertChunks(Db& db, DocumentId id, std::span<const NewChunk> chunks) {
  auto stored_dim = ReadEmbeddingDim(db);
  if (!stored_dim.ok()) return stored_dim.status();
  int dim = *stored_dim;
  const bool had_dim = dim != 0;
  auto insert = db.Prepare(
      "INSERT INTO chunks(document_id, ordinal, text, start_offset, end_offset, token_count, heading, "
      "embedding) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert.ok()) return insert.status();
  std::vector<ChunkId> ids;
  ids.reserve(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    const NewChunk& c = chunks[i];
    // The size check happens chunk by chunk inside the transaction; a failure
    // here discards the chunks already inserted (the destructor rolls back).
    RAGD_RETURN_IF_ERROR(internal::CheckChunkEmbedding(i, c.embedding, dim));
    insert->Reset();
    insert->BindInt(1, id);
    insert->BindInt(2, static_cast<int64_t>(i));
    insert->BindText(3, c.text);
    insert->BindInt(4, c.start);
    insert->BindInt(5, c.end);
    insert->BindInt(6, c.token_count);
    insert->BindText(7, c.heading_context);
    insert->BindBlob(8, c.embedding.data(), c.embedding.size() * sizeof(float));
    RAGD_RETURN_IF_ERROR(insert->Run());
    ids.push_back(db.LastInsertRowId());
  }
  if (!had_dim && dim != 0) RAGD_RETURN_IF_ERROR(WriteEmbeddingDim(db, dim));
  return ids;
}

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(std::unique_ptr<SqliteImpl> impl) : impl_(std::move(impl)) {}

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
  Result<int64_t> CountChunks() const override;
  Result<int64_t> CountDocuments() const override;
  Result<std::vector<LexicalHit>> SearchLexical(std::string_view query, int top_k,
                                                std::span<const DocumentId> only_documents) const override;
  Result<int> SchemaVersion() const override;
  Status CheckIntegrity() const override;
  Result<int64_t> LastChange() const override { return int64_t{0}; }
  Result<std::vector<Change>> ChangesSince(int64_t, int) const override { return std::vector<Change>(); }
  Result<bool> WaitForChange(int timeout_ms) const override {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return false;
  }

 private:
  std::unique_ptr<SqliteImpl> impl_;
};

}  // namespace

Result<std::unique_ptr<Store>> internal::OpenSqliteStore(const StoreOptions& options) {
  if (options.path.empty() || options.path == ":memory:" || options.path.starts_with("file:")) {
    return Status::InvalidArgument("corpus store needs a database file path, got '" + options.path + "'");
  }
  auto impl = std::make_unique<SqliteImpl>();
  impl->options = options;
  auto writer = Db::Open(options.path, options.busy_timeout_ms);
  if (!writer.ok()) return writer.status();
  impl->writer = std::move(writer).value();
  Db& db = *impl->writer;
  {
    auto mode = db.Prepare("PRAGMA journal_mode = WAL");
    if (!mode.ok()) return mode.status();
    auto row = mode->Step();
    if (!row.ok()) return row.status();
    if (!*row || mode->ColumnText(0) != "wal") {
      return Status::IoError("corpus store: cannot switch " + options.path + " to WAL mode");
    }
  }
  RAGD_RETURN_IF_ERROR(
      db.Exec(options.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL"));
  RAGD_RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON"));
  RAGD_RETURN_IF_ERROR(internal::MigrateSchema(db));
  RAGD_RETURN_IF_ERROR(internal::LoadRowSizes(db, "chunks_fts", impl->row_sizes));
  return std::unique_ptr<Store>(new SqliteStore(std::move(impl)));
}

Result<AddResult> SqliteStore::AddDocument(const NewDocument& doc) {
  const std::string sha = NormalizeSha256(doc.sha256);
  if (sha.empty()) return Status::InvalidArgument("document sha256 must be 64 hex characters");
  RAGD_RETURN_IF_ERROR(ValidateChunks(doc.text, doc.chunks));

  std::lock_guard lock(impl_->write_mu);
  Db& db = *impl_->writer;
  Transaction txn(db);
  RAGD_RETURN_IF_ERROR(txn.status());

  AddResult result;
  {
    auto find = db.Prepare("SELECT id FROM documents WHERE sha256 = ?1");
    if (!find.ok()) return find.status();
    find->BindText(1, sha);
    auto row = find->Step();
    if (!row.ok()) return row.status();
    if (*row) {
      result.id = find->ColumnInt(0);
      return result;  // the transaction rolls back; nothing was written
    }
  }
  {
    auto insert = db.Prepare(
        "INSERT INTO documents(title, source_name, media_type, byte_size, sha256, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!insert.ok()) return insert.status();
    insert->BindText(1, doc.title);
    insert->BindText(2, doc.source_name);
    insert->BindText(3, doc.media_type);
    insert->BindInt(4, doc.byte_size);
    insert->BindText(5, sha);
    insert->BindInt(6, static_cast<int64_t>(std::time(nullptr)));
    RAGD_RETURN_IF_ERROR(insert->Run());
    result.id = db.LastInsertRowId();
  }
  {
    auto insert = db.Prepare("INSERT INTO document_texts(document_id, text) VALUES (?1, ?2)");
    if (!insert.ok()) return insert.status();
    insert->BindInt(1, result.id);
    insert->BindText(2, doc.text);
    RAGD_RETURN_IF_ERROR(insert->Run());
  }
  auto chunk_ids = InsertChunks(db, result.id, doc.chunks);
  if (!chunk_ids.ok()) return chunk_ids.status();
  result.chunk_ids = std::move(chunk_ids).value();
  RAGD_RETURN_IF_ERROR(txn.Commit());
  result.inserted = true;
  return result;
}

Result<DocumentInfo> SqliteStore::GetDocument(DocumentId id) const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  auto stmt =
      reader->db().Prepare(std::string("SELECT ") + kDocumentColumns + " FROM documents d WHERE d.id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt(1, id);
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFoundDocument(id);
  return ReadDocument(*stmt);
}

Result<std::optional<DocumentInfo>> SqliteStore::FindDocumentBySha256(std::string_view sha256_hex) const {
  const std::string sha = NormalizeSha256(sha256_hex);
  if (sha.empty()) return Status::InvalidArgument("sha256 must be 64 hex characters");
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  auto stmt = reader->db().Prepare(std::string("SELECT ") + kDocumentColumns +
                                   " FROM documents d WHERE d.sha256 = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, sha);
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<DocumentInfo>();
  return std::optional<DocumentInfo>(ReadDocument(*stmt));
}

Result<std::vector<DocumentInfo>> SqliteStore::ListDocuments(int64_t offset, int64_t limit) const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  auto stmt = reader->db().Prepare(std::string("SELECT ") + kDocumentColumns +
                                   " FROM documents d ORDER BY d.id DESC LIMIT ?1 OFFSET ?2");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt(1, limit < 0 ? -1 : limit);
  stmt->BindInt(2, offset < 0 ? 0 : offset);
  std::vector<DocumentInfo> out;
  for (;;) {
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ReadDocument(*stmt));
  }
}

Result<std::string> SqliteStore::GetDocumentText(DocumentId id) const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  auto stmt = reader->db().Prepare("SELECT text FROM document_texts WHERE document_id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt(1, id);
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFoundDocument(id);
  return stmt->ColumnText(0);
}

Result<std::vector<ChunkId>> SqliteStore::DeleteDocument(DocumentId id) {
  std::lock_guard lock(impl_->write_mu);
  Db& db = *impl_->writer;
  Transaction txn(db);
  RAGD_RETURN_IF_ERROR(txn.status());
  RAGD_RETURN_IF_ERROR(RequireDocument(db, id));
  auto removed = ChunkIdsOf(db, id);
  if (!removed.ok()) return removed.status();
  // Chunks first (their trigger removes the FTS rows), then text, then the document.
  for (const char* sql :
       {"DELETE FROM chunks WHERE document_id = ?1", "DELETE FROM document_texts WHERE document_id = ?1",
        "DELETE FROM documents WHERE id = ?1"}) {
    auto stmt = db.Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    stmt->BindInt(1, id);
    RAGD_RETURN_IF_ERROR(stmt->Run());
  }
  RAGD_RETURN_IF_ERROR(txn.Commit());
  return removed;
}

Result<ReplacedChunks> SqliteStore::ReplaceChunks(DocumentId id, std::span<const NewChunk> chunks) {
  std::lock_guard lock(impl_->write_mu);
  Db& db = *impl_->writer;
  Transaction txn(db);
  RAGD_RETURN_IF_ERROR(txn.status());
  RAGD_RETURN_IF_ERROR(RequireDocument(db, id));
  std::string text;
  {
    auto read = db.Prepare("SELECT text FROM document_texts WHERE document_id = ?1");
    if (!read.ok()) return read.status();
    read->BindInt(1, id);
    auto row = read->Step();
    if (!row.ok()) return row.status();
    if (*row) text = read->ColumnText(0);
  }
  RAGD_RETURN_IF_ERROR(ValidateChunks(text, chunks));
  ReplacedChunks result;
  auto removed = ChunkIdsOf(db, id);
  if (!removed.ok()) return removed.status();
  result.removed = std::move(removed).value();
  {
    auto stmt = db.Prepare("DELETE FROM chunks WHERE document_id = ?1");  // the trigger drops the FTS rows
    if (!stmt.ok()) return stmt.status();
    stmt->BindInt(1, id);
    RAGD_RETURN_IF_ERROR(stmt->Run());
  }
  auto added = InsertChunks(db, id, chunks);
  if (!added.ok()) return added.status();
  result.added = std::move(added).value();
  RAGD_RETURN_IF_ERROR(txn.Commit());
  return result;
}

Result<std::vector<ChunkRecord>> SqliteStore::GetChunks(std::span<const ChunkId> ids,
                                                        bool with_embeddings) const {
  std::vector<ChunkRecord> out;
  if (ids.empty()) return out;
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  Db& db = reader->db();
  // One read transaction so that all chunks come from the same snapshot.
  RAGD_RETURN_IF_ERROR(db.Exec("BEGIN"));
  auto stmt = db.Prepare(std::string("SELECT ") + kChunkColumns +
                         " FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?1");
  Status status = stmt.status();
  for (size_t i = 0; status.ok() && i < ids.size(); ++i) {
    stmt->Reset();
    stmt->BindInt(1, ids[i]);
    auto row = stmt->Step();
    if (!row.ok())
      status = row.status();
    else if (*row)
      out.push_back(ReadChunk(*stmt, with_embeddings));
  }
  if (stmt.ok()) stmt->Reset();
  (void)db.Exec("COMMIT");
  if (!status.ok()) return status;
  return out;
}

Result<std::vector<ChunkRecord>> SqliteStore::ListChunks(DocumentId id, bool with_embeddings) const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  Db& db = reader->db();
  RAGD_RETURN_IF_ERROR(db.Exec("BEGIN"));
  std::vector<ChunkRecord> out;
  Status status = [&]() -> Status {
    auto exists = db.Prepare("SELECT 1 FROM documents WHERE id = ?1");
    if (!exists.ok()) return exists.status();
    exists->BindInt(1, id);
    auto found = exists->Step();
    if (!found.ok()) return found.status();
    if (!*found) return NotFoundDocument(id);
    auto stmt = db.Prepare(std::string("SELECT ") + kChunkColumns +
                           " FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.document_id = ?1"
                           " ORDER BY c.ordinal");
    if (!stmt.ok()) return stmt.status();
    stmt->BindInt(1, id);
    for (;;) {
      auto row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      out.push_back(ReadChunk(*stmt, with_embeddings));
    }
  }();
  (void)db.Exec("COMMIT");
  if (!status.ok()) return status;
  return out;
}

Status SqliteStore::ForEachEmbedding(const std::function<bool(const EmbeddingRow&)>& fn) const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  auto stmt = reader->db().Prepare(
      "SELECT id, document_id, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id");
  if (!stmt.ok()) return stmt.status();
  std::vector<float> buffer;  // the BLOB is not guaranteed to be float-aligned
  for (;;) {
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    const auto blob = stmt->ColumnBlob(2);
    buffer.resize(blob.size() / sizeof(float));
    if (!buffer.empty()) std::memcpy(buffer.data(), blob.data(), buffer.size() * sizeof(float));
    EmbeddingRow r{stmt->ColumnInt(0), stmt->ColumnInt(1), std::span<const float>(buffer)};
    if (!fn(r)) return Status::Ok();
  }
}

Status SqliteStore::ReplaceEmbeddings(std::span<const std::pair<ChunkId, std::vector<float>>> rows) {
  auto checked = internal::ReplacementDim(rows);
  if (!checked.ok()) return checked.status();
  const size_t dim = *checked;
  if (dim == 0) return Status::Ok();
  std::lock_guard lock(impl_->write_mu);
  Db& db = *impl_->writer;
  Transaction txn(db);
  RAGD_RETURN_IF_ERROR(txn.status());
  auto stored_dim = ReadEmbeddingDim(db);
  if (!stored_dim.ok()) return stored_dim.status();
  if (*stored_dim != static_cast<int>(dim)) {
    RAGD_RETURN_IF_ERROR(db.Exec("UPDATE chunks SET embedding = NULL"));
    RAGD_RETURN_IF_ERROR(WriteEmbeddingDim(db, static_cast<int>(dim)));
  }
  auto update = db.Prepare("UPDATE chunks SET embedding = ?2 WHERE id = ?1");
  if (!update.ok()) return update.status();
  for (const auto& [id, v] : rows) {
    update->Reset();
    update->BindInt(1, id);
    update->BindBlob(2, v.data(), v.size() * sizeof(float));
    RAGD_RETURN_IF_ERROR(update->Run());
    if (db.Changes() != 1) return internal::NotFoundChunk(id);
  }
  return txn.Commit();
}

Result<int> SqliteStore::EmbeddingDim() const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  return ReadEmbeddingDim(reader->db());
}

Result<int64_t> SqliteStore::CountChunks() const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  return reader->db().QueryInt("SELECT COUNT(*) FROM chunks");
}

Result<int64_t> SqliteStore::CountDocuments() const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  return reader->db().QueryInt("SELECT COUNT(*) FROM documents");
}

Result<std::vector<LexicalHit>> SqliteStore::SearchLexical(std::string_view query, int top_k,
                                                           std::span<const DocumentId> only_documents) const {
  std::vector<LexicalHit> hits;
  const std::vector<std::string> terms = FtsTerms(RepairUtf8(query));
  if (terms.empty() || top_k <= 0) return hits;
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  Db& db = reader->db();

  // Split the terms into selective and common ones (see store.h): with both,
  // the MATCH is "(selective) AND (selective OR common)" and the score skips
  // the first group's phrases. Selective terms must occur (an absent one
  // would empty the AND); a term of unknown frequency turns pruning off; and
  // a pruned search that finds fewer than top_k chunks is run again in full,
  // so that pruning only ever drops chunks ranked below the top_k kept.
  std::vector<std::string> selective, common;
  bool prune = only_documents.empty() && terms.size() >= 2;
  if (prune) {
    auto rows = db.QueryInt("SELECT count(*) FROM chunks");
    if (!rows.ok()) return rows.status();
    prune = *rows >= impl_->options.lexical_prune_from_chunks;
    for (size_t i = 0; prune && i < terms.size(); ++i) {
      auto fraction = impl_->term_frequencies.Fraction(db, terms[i], *rows);
      if (!fraction.ok()) return fraction.status();
      if (*fraction < 0) prune = false;
      const bool is_selective = *fraction > 0 && *fraction < impl_->options.lexical_common_fraction;
      (is_selective ? selective : common).push_back(terms[i]);
    }
    prune = prune && !selective.empty() && !common.empty();
  }

  // ragd_bm25 is FTS5's bm25 with cached row lengths (fts_rank.h); text
  // weighs twice the heading. Without a filter the FTS table alone is ranked
  // and only the top k rows are joined to their documents (joining every
  // match costs more than the ranking). With a filter the join restricts the
  // matches first.
  auto run = [&](const std::string& match, const std::string& rank) -> Status {
    hits.clear();
    std::string sql;
    std::string filter;
    if (only_documents.empty()) {
      sql =
          "SELECT f.rowid, (SELECT document_id FROM chunks WHERE id = f.rowid), f.score FROM (SELECT "
          "rowid, " +
          rank +
          " AS score FROM chunks_fts WHERE chunks_fts MATCH ?1 "
          "ORDER BY score LIMIT ?2) f ORDER BY f.score";
    } else {
      sql = "SELECT c.id, c.document_id, " + rank +
            " AS score FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?1"
            " AND c.document_id IN (SELECT value FROM json_each(?3)) ORDER BY score LIMIT ?2";
      filter = "[";
      for (size_t i = 0; i < only_documents.size(); ++i) {
        if (i > 0) filter += ',';
        filter += std::to_string(only_documents[i]);
      }
      filter += ']';
    }
    auto stmt = db.Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    stmt->BindText(1, match);
    stmt->BindInt(2, top_k);
    if (!filter.empty()) stmt->BindText(3, filter);
    for (;;) {
      auto row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
      hits.push_back({stmt->ColumnInt(0), stmt->ColumnInt(1), -stmt->ColumnDouble(2)});
    }
  };
  if (prune) {
    std::vector<std::string> all = selective;
    all.insert(all.end(), common.begin(), common.end());
    RAGD_RETURN_IF_ERROR(
        run("(" + JoinFtsTerms(selective) + ") AND (" + JoinFtsTerms(all) + ")",
            "ragd_bm25_tail(chunks_fts, " + std::to_string(selective.size()) + ", 1.0, 0.5)"));
    if (hits.size() >= static_cast<size_t>(top_k)) return hits;
  }
  RAGD_RETURN_IF_ERROR(run(JoinFtsTerms(terms), "ragd_bm25(chunks_fts, 1.0, 0.5)"));
  return hits;
}

Result<int> SqliteStore::SchemaVersion() const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  auto v = reader->db().QueryInt("PRAGMA user_version");
  if (!v.ok()) return v.status();
  return static_cast<int>(*v);
}

Status SqliteStore::CheckIntegrity() const {
  auto reader = impl_->BorrowReader();
  if (!reader.ok()) return reader.status();
  Db& db = reader->db();
  auto stmt = db.Prepare("PRAGMA integrity_check");
  if (!stmt.ok()) return stmt.status();
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row || stmt->ColumnText(0) != "ok") {
    return Status::Corrupt("corpus store integrity check: " +
                           (*row ? stmt->ColumnText(0) : std::string("no answer")));
  }
  // 'integrity-check' is a write-form command but only reads; query_only
  // forbids it, so lift that on this connection for the call.
  RAGD_RETURN_IF_ERROR(db.Exec("PRAGMA query_only = OFF"));
  Status fts = db.Exec("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)");
  RAGD_RETURN_IF_ERROR(db.Exec("PRAGMA query_only = ON"));
  if (!fts.ok()) return Status::Corrupt("corpus store FTS index: " + fts.message());
  return Status::Ok();
}

}  // namespace ragd::corpus
