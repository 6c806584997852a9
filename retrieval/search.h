// Hybrid search: dense (embedding inner product through the VectorIndex) and
// lexical (FTS5 BM25 through the corpus Store) candidates fused by reciprocal
// rank fusion: fused(c) = sum over the lists that hold c of 1 / (rrf_k + rank),
// rank starting at 1. Ties are broken by the better dense, then lexical, rank.
//
// Thread-safety: Search() is const and may run from many threads at once, also
// while an Ingestor writes (the index and store have their own locks).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "corpus/store.h"

namespace ragd::retrieval {

class Embedder;
class VectorIndex;

struct SearchOptions {
  int top_k = 5;                                   // chunks returned
  int candidates = 0;                              // per retriever before fusion; 0 = max(4 * top_k, 20)
  int rrf_k = 60;                                  // reciprocal rank fusion constant
  bool dense = true;                               // use the vector index
  bool lexical = true;                             // use FTS5 BM25
  std::vector<corpus::DocumentId> only_documents;  // non-empty: search only these documents
  int64_t parallel_from_vectors = 50000;           // index size from which dense and lexical run concurrently
};

struct SearchHit {
  corpus::ChunkId chunk_id = 0;
  corpus::DocumentId document_id = 0;
  std::string title;            // the document's title
  std::string text;             // the chunk text
  std::string heading_context;  // "Guide > Install", may be empty
  int64_t start = 0;            // byte offsets of the chunk in the document text
  int64_t end = 0;
  int dense_rank = 0;        // 1-based rank in the dense list, 0 = not in it
  int lexical_rank = 0;      // 1-based rank in the lexical list, 0 = not in it
  float dense_score = 0;     // cosine similarity (valid when dense_rank > 0)
  double lexical_score = 0;  // -bm25, higher is better (valid when lexical_rank > 0)
  double fused_score = 0;    // reciprocal rank fusion score, higher is better
};

// One entry of a fused ranking (pure helper, exposed for tests).
struct FusedId {
  int64_t id = 0;
  double score = 0;
  std::vector<int> ranks;  // 1-based rank in each input list, 0 = absent
};
// Fuses rankings (ids best first) by reciprocal rank fusion, best first.
std::vector<FusedId> FuseReciprocalRank(const std::vector<std::vector<int64_t>>& rankings, int rrf_k);

class HybridSearcher {
 public:
  // None is owned; all must outlive the searcher.
  HybridSearcher(const Embedder* embedder, const corpus::Store* store, const VectorIndex* index)
      : embedder_(embedder), store_(store), index_(index) {}

  // Embeds the query and searches. kInvalidArgument for top_k < 1 or a blank query.
  Result<std::vector<SearchHit>> Search(std::string_view query, const SearchOptions& options = {}) const;
  // Same with a query vector computed by the caller (benchmarks, repeated queries).
  Result<std::vector<SearchHit>> SearchWithVector(std::string_view query,
                                                  const std::vector<float>& query_vector,
                                                  const SearchOptions& options = {}) const;

 private:
  const Embedder* embedder_;
  const corpus::Store* store_;
  const VectorIndex* index_;
};

}  // namespace ragd::retrieval
