#include "retrieval/embedding_cache.h"

#include <utility>

namespace ragd::retrieval {

EmbeddingCache::EmbeddingCache(EmbedTextsFn embed, size_t capacity)
    : embed_(std::move(embed)), capacity_(capacity) {}

Result<std::vector<std::vector<float>>> EmbeddingCache::Embed(const std::vector<std::string>& texts) {
  std::vector<std::vector<float>> out(texts.size());
  std::vector<std::string> missing;
  std::vector<size_t> missing_at;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < texts.size(); ++i) {
      auto it = entries_.find(texts[i]);
      if (it == entries_.end()) {
        missing.push_back(texts[i]);
        missing_at.push_back(i);
        continue;
      }
      out[i] = it->second.vector;
      order_.splice(order_.begin(), order_, it->second.position);
      ++hits_;
    }
    misses_ += missing.size();
  }
  if (missing.empty()) return out;

  auto computed = EmbedEach(embed_, missing);
  if (!computed.ok()) return computed.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t j = 0; j < missing.size(); ++j) {
    out[missing_at[j]] = (*computed)[j];
    if (capacity_ == 0 || entries_.count(missing[j]) > 0) continue;
    order_.push_front(missing[j]);
    entries_.emplace(missing[j], Entry{std::move((*computed)[j]), order_.begin()});
    while (entries_.size() > capacity_) {
      entries_.erase(order_.back());
      order_.pop_back();
    }
  }
  return out;
}

EmbedTextsFn EmbeddingCache::Fn() {
  return [this](const std::vector<std::string>& texts) { return Embed(texts); };
}

size_t EmbeddingCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t EmbeddingCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

size_t EmbeddingCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace ragd::retrieval
