// The on-disk format of the corpus store (an SQLite database).
//
// PRAGMA user_version holds the schema version; kMigrations[i] turns version i
// into version i + 1. Never edit a shipped migration: append a new one.
//
// Version 1:
//   documents(id, title, source_name, media_type, byte_size, sha256 UNIQUE, created_at)
//     created_at: Unix seconds UTC; sha256: lowercase hex of the original upload.
//   document_texts(document_id, text): the extracted UTF-8 text chunk offsets refer to.
//   chunks(id, document_id, ordinal, text, start_offset, end_offset, token_count,
//          heading, embedding)
//     start/end: byte offsets into document_texts.text, [start, end).
//     embedding: NULL or the vector as little-endian IEEE float32, dim = bytes / 4.
//   chunks_fts: FTS5 external-content table over chunks(text, heading), kept in
//     sync by triggers; rowid = chunks.id.
//   meta(key, value): 'embedding_dim' = size shared by every stored embedding.
// Ids use AUTOINCREMENT so a deleted id is never handed out again. A chunk's
// text and heading never change after insertion (only its embedding may):
// ragd_bm25 caches FTS row lengths by chunk id on that basis (fts_rank.h).
#include "corpus/schema.h"

#include <string>

namespace ragd::corpus::internal {
namespace {

constexpr const char* kMigrations[] = {
    // 0 -> 1
    R"sql(
CREATE TABLE documents(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  title TEXT NOT NULL,
  source_name TEXT NOT NULL,
  media_type TEXT NOT NULL,
  byte_size INTEGER NOT NULL,
  sha256 TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE TABLE document_texts(
  document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
  text TEXT NOT NULL
);
CREATE TABLE chunks(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  text TEXT NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  token_count INTEGER NOT NULL,
  heading TEXT NOT NULL DEFAULT '',
  embedding BLOB,
  UNIQUE(document_id, ordinal)
);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  text, heading, content='chunks', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, text, heading) VALUES (new.id, new.text, new.heading);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, text, heading) VALUES ('delete', old.id, old.text, old.heading);
END;
CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text, heading ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, text, heading) VALUES ('delete', old.id, old.text, old.heading);
  INSERT INTO chunks_fts(rowid, text, heading) VALUES (new.id, new.text, new.heading);
END;
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
)sql",
};

constexpr int kLatest = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));

}  // namespace

int LatestSchemaVersion() { return kLatest; }

Status MigrateSchema(Db& db) {
  for (;;) {
    Transaction txn(db);
    RAGD_RETURN_IF_ERROR(txn.status());
    auto version = db.QueryInt("PRAGMA user_version");
    if (!version.ok()) return version.status();
    if (*version == kLatest) return Status::Ok();
    if (*version > kLatest || *version < 0) {
      return Status::Unsupported("corpus database has schema version " + std::to_string(*version) +
                                 "; this build knows up to " + std::to_string(kLatest));
    }
    RAGD_RETURN_IF_ERROR(db.Exec(kMigrations[*version]));
    RAGD_RETURN_IF_ERROR(db.Exec("PRAGMA user_version = " + std::to_string(*version + 1)));
    RAGD_RETURN_IF_ERROR(txn.Commit());
  }
}

}  // namespace ragd::corpus::internal
