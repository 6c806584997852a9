#include "retrieval/search.h"

#include <algorithm>
#include <future>
#include <system_error>
#include <unordered_map>

#include "common/text.h"
#include "retrieval/embedder.h"
#include "retrieval/vector_index.h"

namespace ragd::retrieval {

std::vector<FusedId> FuseReciprocalRank(const std::vector<std::vector<int64_t>>& rankings, int rrf_k) {
  std::vector<FusedId> fused;
  std::unordered_map<int64_t, size_t> slot;
  for (size_t list = 0; list < rankings.size(); ++list) {
    for (size_t r = 0; r < rankings[list].size(); ++r) {
      const int64_t id = rankings[list][r];
      auto [it, fresh] = slot.emplace(id, fused.size());
      if (fresh) fused.push_back({id, 0.0, std::vector<int>(rankings.size(), 0)});
      FusedId& f = fused[it->second];
      if (f.ranks[list] != 0) continue;  // a repeated id counts at its best rank only
      f.ranks[list] = static_cast<int>(r) + 1;
      f.score += 1.0 / (rrf_k + static_cast<double>(r) + 1.0);
    }
  }
  auto best_rank = [](const FusedId& f, size_t list) {
    return f.ranks[list] == 0 ? std::numeric_limits<int>::max() : f.ranks[list];
  };
  std::stable_sort(fused.begin(), fused.end(), [&](const FusedId& a, const FusedId& b) {
    if (a.score != b.score) return a.score > b.score;
    for (size_t list = 0; list < rankings.size(); ++list) {
      if (best_rank(a, list) != best_rank(b, list)) return best_rank(a, list) < best_rank(b, list);
    }
    return a.id < b.id;
  });
  return fused;
}

Result<std::vector<SearchHit>> HybridSearcher::Search(std::string_view query,
                                                      const SearchOptions& options) const {
  if (Trim(query).empty()) return Status::InvalidArgument("empty query");
  std::vector<float> vec;
  if (options.dense) {
    auto v = embedder_->EmbedOne(query);
    if (!v.ok()) return v.status();
    vec = std::move(*v);
  }
  return SearchWithVector(query, vec, options);
}

Result<std::vector<SearchHit>> HybridSearcher::SearchWithVector(std::string_view query,
                                                                const std::vector<float>& query_vector,
                                                                const SearchOptions& options) const {
  if (options.top_k < 1) return Status::InvalidArgument("top_k must be at least 1");
  if (options.rrf_k < 0) return Status::InvalidArgument("rrf_k must not be negative");
  const int candidates = options.candidates > 0 ? options.candidates : std::max(4 * options.top_k, 20);

  // With both halves on a large index, the lexical one runs on a second
  // thread while this one does the dense one (each is single-threaded); on a
  // small index both take well under a millisecond and a thread is not worth
  // starting. Here too if no thread starts.
  auto search_lexical = [&] { return store_->SearchLexical(query, candidates, options.only_documents); };
  std::future<Result<std::vector<corpus::LexicalHit>>> lexical_pending;
  if (options.lexical && options.dense && index_->size() >= options.parallel_from_vectors) {
    try {
      lexical_pending = std::async(std::launch::async, search_lexical);
    } catch (const std::system_error&) {
    }
  }

  std::vector<VectorHit> dense;
  if (options.dense) {
    Result<std::vector<VectorHit>> hits = std::vector<VectorHit>{};
    if (options.only_documents.empty()) {
      hits = index_->Search(query_vector, candidates);
    } else {
      std::vector<int64_t> ids;
      for (corpus::DocumentId doc : options.only_documents) {
        auto chunks = store_->ListChunks(doc);
        if (!chunks.ok()) {
          if (chunks.status().code() == StatusCode::kNotFound) continue;
          return chunks.status();
        }
        for (const auto& c : *chunks) ids.push_back(c.id);
      }
      hits = index_->SearchAmong(query_vector, ids, candidates);
    }
    if (!hits.ok()) return hits.status();
    dense = std::move(*hits);
  }
  std::vector<corpus::LexicalHit> lexical;
  if (options.lexical) {
    auto hits = lexical_pending.valid() ? lexical_pending.get() : search_lexical();
    if (!hits.ok()) return hits.status();
    lexical = std::move(*hits);
  }

  std::vector<std::vector<int64_t>> rankings(2);
  std::unordered_map<int64_t, float> dense_score;
  std::unordered_map<int64_t, double> lexical_score;
  for (const auto& h : dense) {
    rankings[0].push_back(h.id);
    dense_score.emplace(h.id, h.score);
  }
  for (const auto& h : lexical) {
    rankings[1].push_back(h.chunk_id);
    lexical_score.emplace(h.chunk_id, h.score);
  }
  std::vector<FusedId> fused = FuseReciprocalRank(rankings, options.rrf_k);

  // Fetch a few more than top_k: a chunk deleted since the index was read is
  // skipped by GetChunks.
  std::vector<SearchHit> out;
  size_t next = 0;
  while (out.size() < static_cast<size_t>(options.top_k) && next < fused.size()) {
    const size_t want = static_cast<size_t>(options.top_k) - out.size();
    std::vector<corpus::ChunkId> ids;
    std::vector<const FusedId*> picked;
    for (; next < fused.size() && ids.size() < want + 2; ++next) {
      ids.push_back(fused[next].id);
      picked.push_back(&fused[next]);
    }
    auto records = store_->GetChunks(ids);
    if (!records.ok()) return records.status();
    std::unordered_map<int64_t, const corpus::ChunkRecord*> by_id;
    for (const auto& r : *records) by_id.emplace(r.id, &r);
    for (const FusedId* f : picked) {
      auto it = by_id.find(f->id);
      if (it == by_id.end() || out.size() >= static_cast<size_t>(options.top_k)) continue;
      const corpus::ChunkRecord& r = *it->second;
      SearchHit hit;
      hit.chunk_id = r.id;
      hit.document_id = r.document_id;
      hit.title = r.document_title;
      hit.text = r.text;
      hit.heading_context = r.heading_context;
      hit.start = r.start;
      hit.end = r.end;
      hit.dense_rank = f->ranks[0];
      hit.lexical_rank = f->ranks[1];
      if (hit.dense_rank > 0) hit.dense_score = dense_score[r.id];
      if (hit.lexical_rank > 0) hit.lexical_score = lexical_score[r.id];
      hit.fused_score = f->score;
      out.push_back(std::move(hit));
    }
  }
  return out;
}

}  // namespace ragd::retrieval
