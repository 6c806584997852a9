// Ingestion pipeline: bytes of an upload -> extract -> chunk (token counts from
// the embedding tokenizer) -> embed -> one store transaction -> vector index.
//
// A document becomes searchable only once its store transaction has committed:
// a failure or crash before that leaves nothing; a crash after it (before the
// index add or the next index save) is repaired when the Retriever reopens and
// rebuilds the index from the stored embeddings. Re-uploading the same bytes
// (same SHA-256) adds nothing and reports the existing document.
//
// Thread-safety: all methods may be called from any thread. Extraction,
// chunking and embedding run in parallel across calls; the commit and index
// update (and Delete) are serialised so store and index change in one order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "corpus/chunker.h"
#include "corpus/extract.h"
#include "corpus/extract_process.h"
#include "corpus/store.h"

namespace ragd::retrieval {

class Embedder;
class VectorIndex;

struct IngestOptions {
  corpus::ChunkerOptions chunking;  // chunk size and overlap, in embedding tokens
  corpus::ExtractOptions extract;   // size limit and binary/UTF-8 refusals
  // Where extraction runs: a child process under CPU, memory, time and output
  // limits, or (no worker command) this process.
  corpus::ContainmentOptions containment;
  bool embed_heading_context = true;  // embed "heading\n\ntext" rather than the bare chunk text
};

struct IngestResult {
  corpus::DocumentId document_id = 0;
  bool inserted = false;  // false: duplicate of document_id, nothing added
  std::string title;
  std::string media_type;
  int64_t chunk_count = 0;
  int64_t token_count = 0;  // embedding tokens over all chunks
  int64_t byte_size = 0;
};

class Ingestor {
 public:
  // None is owned; all must outlive the ingestor. `on_change` (may be empty)
  // is called after every committed add or delete, under the write lock.
  Ingestor(const Embedder* embedder, corpus::Store* store, VectorIndex* index, IngestOptions options,
           std::function<void()> on_change = {})
      : embedder_(embedder),
        store_(store),
        index_(index),
        options_(std::move(options)),
        on_change_(std::move(on_change)) {}

  // `file_name` and `media_type` guide format detection (either may be empty);
  // `title` non-empty replaces the extracted title. `cancel`, when set, is
  // polled during extraction (the child is killed) and checked between
  // embedding batches (kCancelled, nothing written). `progress`, when set, is
  // called on this thread with the chunks embedded so far and their total.
  // Errors: the refusals of corpus::Extract (kOutOfRange, kUnsupported,
  // kInvalidArgument), the containment limits (kResourceExhausted, see
  // corpus/extract_process.h) and store/index failures.
  Result<IngestResult> IngestBytes(std::string_view bytes, std::string_view file_name,
                                   std::string_view media_type = {}, std::string_view title = {},
                                   const std::atomic<bool>* cancel = nullptr,
                                   const std::function<void(int64_t done, int64_t total)>& progress = {});
  // Reads the file (kNotFound, kIoError, kOutOfRange above the size limit) and ingests it.
  Result<IngestResult> IngestFile(const std::string& path, const std::atomic<bool>* cancel = nullptr);

  // Removes the document from store and index; returns its chunk count. kNotFound when absent.
  Result<int64_t> Delete(corpus::DocumentId id);

  // Chunks and embeds the stored text of document `id` again with today's
  // chunking options and embedder, and swaps its chunks in store and index
  // (after a change of chunk size or embedding model). The document keeps
  // its id; searches meanwhile see the old chunks. `cancel` and `progress`
  // as for IngestBytes. kNotFound when absent.
  Result<IngestResult> Reindex(corpus::DocumentId id, const std::atomic<bool>* cancel = nullptr,
                               const std::function<void(int64_t done, int64_t total)>& progress = {});

  // Brings the vector index in line with changes other processes made to a
  // shared store (corpus::Store::ChangesSince), in order: a chunk whose last
  // change removed it leaves the index, one added or re-embedded is (re)read
  // from the store and added unless already there (this process's own
  // writes are, since they reach the index under the same lock). Chunks
  // deleted since are skipped. Returns the vectors added and removed.
  Result<std::pair<int64_t, int64_t>> Follow(std::span<const corpus::Change> changes);

 private:
  // Chunks `text` and embeds the chunks (with their heading context when
  // the options say so), in batches between looks at `cancel`.
  Result<std::vector<corpus::NewChunk>> ChunkAndEmbed(
      const std::string& text, const std::atomic<bool>* cancel,
      const std::function<void(int64_t, int64_t)>& progress) const;

  const Embedder* embedder_;
  corpus::Store* store_;
  VectorIndex* index_;
  IngestOptions options_;
  std::function<void()> on_change_;
  std::mutex write_mutex_;  // orders store commits with index updates
};

}  // namespace ragd::retrieval
