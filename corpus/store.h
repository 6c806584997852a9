// Store: documents, their extracted text and their chunks (with embeddings),
// plus lexical (full-text) search over chunk text. One interface, two engines:
//
// - SQLite (the default): one database file, FTS5 with BM25 (store_sqlite.cpp).
//   It runs in WAL mode; with StoreOptions::synchronous_full (the default) a
//   returned commit is on disk, so an acknowledged upload survives a power loss.
// - PostgreSQL (StoreOptions::postgres_url): the store N replicas share, with
//   PostgreSQL text search (store_postgres.cpp); tables prefixed corpus_, so it
//   may share a database with the accounts.
//
// On both: every write is one transaction (AddDocument stores the document,
// its text, all its chunks, embeddings and search rows, or nothing); document
// and chunk ids are never reused, even after deletes, so a chunk id is a
// stable key for an external vector index; the schema is versioned and
// migrated on Open.
//
// Thread-safety: a Store is safe to use from any number of threads. Writes
// are serialised on one writer connection; reads run concurrently on a small
// pool of reader connections (one is borrowed per call) and see the last
// committed state.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::corpus {

using DocumentId = int64_t;
using ChunkId = int64_t;

struct StoreOptions {
  // SQLite: the database file; created (with its -wal/-shm companions) when missing.
  std::string path;
  // Non-empty: the store lives in this PostgreSQL database (a postgresql://
  // URL or libpq "key=value" pairs) and `path` is unused.
  std::string postgres_url;
  // SQLite only. true: PRAGMA synchronous=FULL (a returned commit survives power loss);
  // false: NORMAL (survives a process crash, a power loss may drop the last commits).
  bool synchronous_full = true;
  // How long a writer waits for a lock held by another process before failing.
  int busy_timeout_ms = 5000;
  // Reader connections kept open for reuse; more are opened on demand under load.
  int max_idle_readers = 4;
  // SearchLexical on at least this many chunks ranks only chunks holding one
  // of the query's selective terms, when it also has common ones (see there).
  int64_t lexical_prune_from_chunks = 20000;
  // A term found in at least this fraction of the chunks is common.
  double lexical_common_fraction = 0.05;
};

// A document as listed (no text, no chunks).
struct DocumentInfo {
  DocumentId id = 0;
  std::string title;
  std::string source_name;  // the uploaded file name (or a caller-chosen label)
  std::string media_type;   // "text/plain", "text/markdown", "text/html", "application/pdf"
  int64_t byte_size = 0;    // size of the original upload in bytes
  std::string sha256;       // lowercase hex SHA-256 of the original bytes (see sha256.h)
  int64_t created_at = 0;   // Unix seconds (UTC) when it was stored
  int64_t chunk_count = 0;
};

// One chunk to store with a new document. Offsets are byte offsets into the
// document's extracted text: text == document_text.substr(start, end - start).
struct NewChunk {
  std::string text;
  int64_t start = 0;
  int64_t end = 0;
  int token_count = 0;
  std::string heading_context;   // e.g. "Guide > Install > Linux"; empty when none
  std::vector<float> embedding;  // may be empty; all non-empty ones share one size
};

struct NewDocument {
  std::string title;
  std::string source_name;
  std::string media_type;
  int64_t byte_size = 0;
  std::string sha256;            // lowercase hex, 64 chars; must be unique in the store
  std::string text;              // the extracted text the chunk offsets refer to
  std::vector<NewChunk> chunks;  // in document order; ordinal = index
};

struct AddResult {
  DocumentId id = 0;
  // false: a document with the same sha256 already existed; nothing was
  // written and `id` is the existing document's id.
  bool inserted = false;
  std::vector<ChunkId> chunk_ids;  // ids of the new chunks, in order (empty when !inserted)
};

// What ReplaceChunks changed: the chunk ids to drop from a vector index and
// the new ones, in ordinal order.
struct ReplacedChunks {
  std::vector<ChunkId> removed;
  std::vector<ChunkId> added;
};

// A stored chunk as returned to readers.
struct ChunkRecord {
  ChunkId id = 0;
  DocumentId document_id = 0;
  std::string document_title;
  int ordinal = 0;  // 0-based position in its document
  std::string text;
  int64_t start = 0;
  int64_t end = 0;
  int token_count = 0;
  std::string heading_context;
  std::vector<float> embedding;  // filled only when asked for
};

// One (chunk id, embedding) pair while rebuilding a vector index. The span is
// valid only during the callback.
struct EmbeddingRow {
  ChunkId chunk_id = 0;
  DocumentId document_id = 0;
  std::span<const float> embedding;
};

struct LexicalHit {
  ChunkId chunk_id = 0;
  DocumentId document_id = 0;
  // Higher is better, > 0 for any hit. SQLite: -bm25(); PostgreSQL: IDF of
  // the terms held plus cover density (see SearchLexical). Compare scores
  // of one engine only.
  double score = 0;
};

// One entry of the change sequence (see Store::ChangesSince).
struct Change {
  enum class Op { kAdd, kRemove, kEmbed };  // kEmbed: the chunk's embedding was replaced
  int64_t seq = 0;
  ChunkId chunk_id = 0;
  Op op = Op::kAdd;
};

class Store {
 public:
  // Opens (or creates) the database and applies pending schema migrations.
  // Fails with kUnsupported when the file has a newer schema than this build.
  // PostgreSQL: kUnavailable when it cannot connect.
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Stores a document with its text and all chunks in one transaction.
  // Dedupe: when a document with doc.sha256 exists, returns it with
  // inserted=false and writes nothing. Errors: kInvalidArgument (bad sha256,
  // chunk offsets outside the text or not matching chunk text, embeddings of
  // differing sizes or not matching the store's embedding size), kIoError /
  // kInternal for database failures (nothing is written then).
  virtual Result<AddResult> AddDocument(const NewDocument& doc) = 0;

  // kNotFound when absent.
  virtual Result<DocumentInfo> GetDocument(DocumentId id) const = 0;
  // std::nullopt when no document has these bytes.
  virtual Result<std::optional<DocumentInfo>> FindDocumentBySha256(std::string_view sha256_hex) const = 0;
  // Newest first. limit < 0: all.
  virtual Result<std::vector<DocumentInfo>> ListDocuments(int64_t offset = 0, int64_t limit = -1) const = 0;
  // The extracted text of a document (what chunk offsets refer to).
  virtual Result<std::string> GetDocumentText(DocumentId id) const = 0;
  // Removes the document, its text, chunks and FTS rows in one transaction;
  // returns the removed chunk ids (to drop from a vector index). kNotFound when absent.
  virtual Result<std::vector<ChunkId>> DeleteDocument(DocumentId id) = 0;
  // Re-chunking a stored document (new chunk size, new embedding model): its
  // chunks and their FTS rows are replaced by `chunks` (offsets into the
  // stored text, checked as in AddDocument) in one transaction; the document
  // keeps its id, text and metadata. kNotFound when absent.
  virtual Result<ReplacedChunks> ReplaceChunks(DocumentId id, std::span<const NewChunk> chunks) = 0;

  // Chunks with these ids, in the order given; ids that do not exist (e.g.
  // deleted meanwhile) are skipped, duplicates are returned once per mention.
  virtual Result<std::vector<ChunkRecord>> GetChunks(std::span<const ChunkId> ids,
                                                     bool with_embeddings = false) const = 0;
  // All chunks of one document in ordinal order (kNotFound when no such document).
  virtual Result<std::vector<ChunkRecord>> ListChunks(DocumentId id, bool with_embeddings = false) const = 0;

  // Calls fn for every chunk that has an embedding, in chunk id order, from
  // one consistent snapshot. fn returns false to stop early.
  virtual Status ForEachEmbedding(const std::function<bool(const EmbeddingRow&)>& fn) const = 0;
  // Replaces embeddings (e.g. after switching the embedding model) in one
  // transaction; all must have one size. Resets the store's embedding size to it.
  // Embeddings of chunks not listed are cleared when the size changes.
  virtual Status ReplaceEmbeddings(std::span<const std::pair<ChunkId, std::vector<float>>> rows) = 0;
  // Size of the stored embeddings, 0 when none has been stored yet.
  virtual Result<int> EmbeddingDim() const = 0;

  virtual Result<int64_t> CountChunks() const = 0;
  virtual Result<int64_t> CountDocuments() const = 0;

  // Top-k chunks by lexical relevance to `query` (the heading context
  // counts half as much as the text). SQLite: BM25 over FTS5. Any
  // user text is safe: it is split into terms, each quoted, so operators and
  // syntax characters have no effect; terms are OR-ed and common English
  // function words dropped (see BuildFtsQuery). A query with no searchable
  // term returns no hits (not an error). only_documents non-empty: restrict
  // to those documents.
  //
  // Scores are FTS5's bm25() over all the query's terms. Without a document
  // filter, on a store of at least lexical_prune_from_chunks chunks, a query
  // that mixes selective terms with common ones (found in at least
  // lexical_common_fraction of the chunks) ranks only the chunks holding a
  // selective term: a chunk with common terms only scores low (each term
  // adds less than 2.2 x its IDF, ~3 at 5%) and skipping those chunks is
  // what keeps such queries cheap. Term frequencies for that choice are
  // cached per store (ASCII terms; others always count as selective).
  //
  // PostgreSQL: each chunk's search vector is built with the text search
  // configuration of its language (english, portuguese, french, spanish,
  // german, else simple; see language.h), the same terms are OR-ed into a
  // query under each of those configurations, and the union of the six is
  // matched, so a question in any of the languages meets the stemmed forms
  // of chunks written in it. A score is the sum of the IDF of the query's
  // terms the chunk holds plus its cover density (ts_rank_cd, scaled into
  // [0, 1)); pruning works as above, the chunk counts of terms cached.
  virtual Result<std::vector<LexicalHit>> SearchLexical(
      std::string_view query, int top_k, std::span<const DocumentId> only_documents = {}) const = 0;

  // The schema version of the open database (SQLite: PRAGMA user_version;
  // PostgreSQL: corpus_schema_version).
  virtual Result<int> SchemaVersion() const = 0;
  // SQLite: its integrity check and the FTS5 index check (the index must
  // match the chunks table); PostgreSQL: every chunk has its search vector.
  // kCorrupt with the first problem found.
  virtual Status CheckIntegrity() const = 0;

  // The change sequence, for replicas that share a PostgreSQL store: every
  // write appends, in its own transaction, one entry per chunk it added,
  // removed or re-embedded; entries are numbered in commit order (writes
  // take turns across processes), so a reader that has applied everything
  // up to `seq` needs exactly ChangesSince(seq). SQLite has no other writer
  // and keeps no sequence: LastChange() is 0 and ChangesSince is empty.
  virtual Result<int64_t> LastChange() const = 0;
  // At most `limit` entries after `seq`, oldest first.
  virtual Result<std::vector<Change>> ChangesSince(int64_t seq, int limit) const = 0;
  // Waits up to timeout_ms for a write to commit (PostgreSQL: LISTEN on a
  // connection of its own); true when one may have. A waiter must still read
  // ChangesSince: a notice can be missed (a lost connection) or early.
  // One thread at a time. SQLite: sleeps and answers false.
  virtual Result<bool> WaitForChange(int timeout_ms) const = 0;

 protected:
  Store() = default;
};

// The FTS5 MATCH expression SearchLexical uses for `user_text`: terms are
// runs of ASCII letters/digits and non-ASCII bytes, deduplicated
// case-insensitively, at most 64; English function words are dropped unless
// only they are left; each term double-quoted, joined with OR; "" when there
// is no term. Exposed for tests.
std::string BuildFtsQuery(std::string_view user_text);
// The terms of BuildFtsQuery, in order, and the join that makes the query.
std::vector<std::string> FtsTerms(std::string_view user_text);
std::string JoinFtsTerms(std::span<const std::string> terms);

}  // namespace ragd::corpus
