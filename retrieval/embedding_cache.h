// EmbeddingCache: the vectors of recently embedded texts, so that texts
// embedded again are not computed again.
//
// Citation attribution (attribution.h) embeds each retrieved passage and
// every sentence of it for each answer: about 35 texts for 5 chunks, 0.1-0.7 s
// of the embedding model on 2 cores. The answer's first words wait for it
// whenever the prompt is already in the prefix cache (a question asked
// again). A small corpus answers many questions from the same chunks, so
// most of those texts were embedded for an earlier answer.
//
// Entries are keyed by the whole text (no hash collisions to reason about)
// and evicted least recently used first once `capacity` texts are held
// (1.5 KiB per 384-dimension vector, plus the text twice: key and recency
// list).
//
// Thread-safety: Embed may be called from any thread; the embedding function
// it wraps is called outside the lock, so two threads missing on the same
// text may both compute it.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "retrieval/support.h"

namespace ragd::retrieval {

class EmbeddingCache {
 public:
  EmbeddingCache(EmbedTextsFn embed, size_t capacity);

  // One vector per text, in order: cached ones as they were, the others from
  // one call of the wrapped function (none when all are cached). Errors are
  // that function's; nothing is cached from a failed call.
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts);

  // Embed as an EmbedTextsFn; the cache must outlive it.
  EmbedTextsFn Fn();

  size_t size() const;
  size_t hits() const;
  size_t misses() const;

 private:
  using Order = std::list<std::string>;  // most recently used first
  struct Entry {
    std::vector<float> vector;
    Order::iterator position;
  };

  EmbedTextsFn embed_;
  size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  Order order_;
  size_t hits_ = 0, misses_ = 0;
};

}  // namespace ragd::retrieval
