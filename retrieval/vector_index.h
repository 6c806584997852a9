// Dense vector index over chunk embeddings (inner product = cosine on
// normalized vectors), keyed by chunk id. The only user of FAISS.
//
// Kinds: "flat" (exact; IndexIDMap2 over IndexFlatIP) and "hnsw" (approximate;
// IndexIDMap2 over IndexHNSWFlat with METRIC_INNER_PRODUCT). HNSW cannot
// delete in place: Remove() on it rebuilds the graph from the remaining
// vectors (O(n log n)); prefer "flat" when deletes are frequent.
//
// File format: FAISS's own serialization (faiss::write_index / read_index) of
// the IndexIDMap2; the kind and dimension are read back from it. Save() writes
// to "<path>.tmp" and renames it over <path>, so a crash leaves the old or the
// new file, never half of one.
//
// Thread-safety: all methods may be called from any thread. Searches share a
// reader lock and run concurrently; Add/Remove take the writer lock; Save holds
// a reader lock while serializing. FAISS work runs on the calling thread only
// (OpenMP set to one thread for it). A flat search scans an int8 copy of the
// vectors (int8_rows.h) and rescores the rows its error bound cannot rule
// out with the float vectors, so it stays exact.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace ragd::retrieval {

struct VectorIndexOptions {
  std::string kind = "flat";      // "flat" (exact) or "hnsw" (approximate, large corpora)
  int hnsw_m = 16;                // HNSW: links per node (build time grows with it)
  int hnsw_ef_construction = 40;  // HNSW: candidate list size while adding (build time grows with it)
  int hnsw_ef_search = 64;        // HNSW: candidate list size while searching (>= k is used)
};

struct VectorHit {
  int64_t id = 0;
  float score = 0;  // inner product, higher is closer
};

// What an index holds, to compare with the store cheaply.
struct IdSummary {
  int64_t count = 0;
  int64_t max_id = 0;
  uint64_t id_sum = 0;  // sum of ids modulo 2^64
  bool operator==(const IdSummary&) const = default;
  void Add(int64_t id);
};

class VectorIndex {
 public:
  ~VectorIndex();
  // An empty index. kInvalidArgument for dim <= 0 or an unknown kind.
  static Result<std::unique_ptr<VectorIndex>> Create(int dim, const VectorIndexOptions& options);
  // Reads a saved index. kNotFound when missing, kCorrupt when unreadable,
  // kInvalidArgument when its kind differs from options.kind.
  static Result<std::unique_ptr<VectorIndex>> Load(const std::string& path,
                                                   const VectorIndexOptions& options);
  Status Save(const std::string& path) const;

  // Adds vectors (ids.size() x dim() floats, row-major). kInvalidArgument on
  // a size mismatch or an id already present.
  Status Add(std::span<const int64_t> ids, std::span<const float> vectors);
  // Removes the ids present; absent ids are ignored.
  Status Remove(std::span<const int64_t> ids);

  // The k nearest by inner product, best first (fewer when the index is smaller).
  Result<std::vector<VectorHit>> Search(std::span<const float> query, int k) const;
  // Exact top-k among `candidates` only (ids not in the index are ignored).
  Result<std::vector<VectorHit>> SearchAmong(std::span<const float> query,
                                             std::span<const int64_t> candidates, int k) const;

  int dim() const { return dim_; }
  const std::string& kind() const { return options_.kind; }
  int64_t size() const;
  IdSummary Summary() const;
  bool Contains(int64_t id) const;
  // Every id in the index, in insertion order.
  std::vector<int64_t> Ids() const;

 private:
  struct Impl;  // the FAISS objects
  VectorIndex(int dim, VectorIndexOptions options);
  Status RebuildWithout(std::span<const int64_t> ids);  // HNSW remove; writer lock held
  // Flat search over n rows at xb: the k best rows and their scores, best first.
  void FlatTopK(const float* xb, size_t n, std::span<const float> query, int k, std::vector<float>& scores,
                std::vector<int64_t>& rows) const;

  int dim_;
  VectorIndexOptions options_;
  mutable std::shared_mutex mutex_;
  std::unique_ptr<Impl> impl_;  // GUARDED_BY(mutex_)
};

}  // namespace ragd::retrieval
