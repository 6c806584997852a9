// Retriever: the retrieval tier behind one object. Owns the corpus Store
// (<data_dir>/corpus.db) and the VectorIndex (<data_dir>/vectors.faiss), shares
// the Embedder, and offers hybrid search and ingestion on top.
//
// Index consistency: the store is the source of truth. Open() loads the saved
// index and compares it with the store's embeddings (count, largest chunk id,
// sum of chunk ids); when they differ, the index is repaired: vectors of
// chunks no longer stored are removed and stored embeddings missing from the
// index are added (the usual case after a crash between a commit and the next
// index save). When the file is missing, unreadable, or of another kind or
// dimension, the index is rebuilt from all stored embeddings. Nothing is
// re-embedded; a repaired or rebuilt index is saved at once. Changes are saved at most
// every index_save_interval_s seconds, by SaveIndex(), and on destruction, so a
// crash loses at most the index changes since the last save, which the next
// Open() repairs.
//
// A shared store (RetrieverOptions::postgres_url: the corpus of N replicas
// in one PostgreSQL database) is written by other processes too: the
// retriever then follows the store's change sequence on a thread of its
// own, waking on each commit's notice (LISTEN) and at least every
// follow_poll_ms, and adds and removes those chunks' vectors in its index.
// Open() notes the sequence's end before checking the index against the
// store, and follows from there, so nothing committed meanwhile is missed.
// The index file stays per replica (in data_dir), derived from the store.
//
// Thread-safety: all methods may be called from any thread at once (see
// HybridSearcher and Ingestor).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "corpus/store.h"
#include "retrieval/embedder.h"
#include "retrieval/ingest.h"
#include "retrieval/search.h"
#include "retrieval/vector_index.h"

namespace ragd::retrieval {

struct RetrieverOptions {
  std::string data_dir = "data";   // holds corpus.db and vectors.faiss (created when missing)
  std::string postgres_url;        // non-empty: the corpus lives in this PostgreSQL database, not corpus.db
  int follow_poll_ms = 1000;       // shared store: longest wait between looks at the change sequence
  VectorIndexOptions index;        // index kind and HNSW parameters
  IngestOptions ingest;            // extraction limits and chunking
  bool synchronous_full = true;    // store commits reach the disk before returning
  int index_save_interval_s = 30;  // least seconds between automatic index saves
};

// What Open() found.
struct OpenReport {
  bool rebuilt = false;   // the index was rebuilt from the store
  bool repaired = false;  // the saved index was brought in line with the store
  int64_t added = 0;      // vectors added by the repair
  int64_t removed = 0;    // vectors removed by the repair
  std::string reason;     // why it was rebuilt or repaired (empty when loaded as saved)
  int64_t vectors = 0;    // vectors in the index after opening
  double seconds = 0;     // time spent checking, repairing and rebuilding
};

class Retriever {
 public:
  static Result<std::unique_ptr<Retriever>> Open(const RetrieverOptions& options,
                                                 std::shared_ptr<const Embedder> embedder,
                                                 OpenReport* report = nullptr);
  ~Retriever();  // saves the index when it changed

  // Hybrid search (see search.h).
  Result<std::vector<SearchHit>> Search(std::string_view query, const SearchOptions& options = {}) const {
    return searcher_.Search(query, options);
  }
  // Ingestion (see ingest.h).
  Result<IngestResult> Ingest(std::string_view bytes, std::string_view file_name,
                              std::string_view media_type = {}, std::string_view title = {},
                              const std::atomic<bool>* cancel = nullptr,
                              const std::function<void(int64_t done, int64_t total)>& progress = {}) {
    return ingestor_->IngestBytes(bytes, file_name, media_type, title, cancel, progress);
  }
  Result<IngestResult> IngestFile(const std::string& path, const std::atomic<bool>* cancel = nullptr) {
    return ingestor_->IngestFile(path, cancel);
  }
  Result<int64_t> DeleteDocument(corpus::DocumentId id) { return ingestor_->Delete(id); }
  Result<IngestResult> Reindex(corpus::DocumentId id, const std::atomic<bool>* cancel = nullptr,
                               const std::function<void(int64_t done, int64_t total)>& progress = {}) {
    return ingestor_->Reindex(id, cancel, progress);
  }

  // Writes the index now if it changed since the last save.
  Status SaveIndex();

  // Shared store: the last change of the sequence the index reflects, and
  // the vectors added and removed by following it (0 otherwise).
  int64_t followed_change() const { return followed_.load(); }
  int64_t followed_vectors() const { return followed_vectors_.load(); }

  corpus::Store& store() { return *store_; }
  const corpus::Store& store() const { return *store_; }
  const VectorIndex& index() const { return *index_; }
  const Embedder& embedder() const { return *embedder_; }
  const HybridSearcher& searcher() const { return searcher_; }
  std::string index_path() const;
  std::string database_path() const;

 private:
  Retriever(RetrieverOptions options, std::shared_ptr<const Embedder> embedder,
            std::unique_ptr<corpus::Store> store, std::unique_ptr<VectorIndex> index);
  void OnChange();       // called by the ingestor under its write lock
  void FollowChanges();  // the follower thread (shared store)

  RetrieverOptions options_;
  std::shared_ptr<const Embedder> embedder_;
  std::unique_ptr<corpus::Store> store_;
  std::unique_ptr<VectorIndex> index_;
  HybridSearcher searcher_;
  std::unique_ptr<Ingestor> ingestor_;
  std::mutex save_mutex_;
  std::atomic<bool> dirty_{false};
  std::chrono::steady_clock::time_point last_save_;  // GUARDED_BY(save_mutex_)
  std::atomic<int64_t> followed_{0};
  std::atomic<int64_t> followed_vectors_{0};
  std::atomic<bool> stop_{false};
  std::thread follower_;  // shared store only
};

// Loads the index at `path`, repairing or rebuilding it from the store's
// embeddings (and saving it) when inconsistent or missing; see Retriever.
Result<std::unique_ptr<VectorIndex>> LoadOrRebuildIndex(const corpus::Store& store, const std::string& path,
                                                        int dim, const VectorIndexOptions& options,
                                                        OpenReport* report = nullptr);

}  // namespace ragd::retrieval
