#include "inference/prefix_cache.h"

#include <algorithm>
#include <cstring>

namespace ragd::inference {
namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 29);
}

}  // namespace

PrefixCache::PrefixCache(const ModelConfig& config, PrefixCacheOptions options)
    : config_(config), options_(options) {
  options_.block_tokens = std::max(1, options_.block_tokens);
  block_bytes_ = static_cast<size_t>(config.n_layer) * 2 * options_.block_tokens * KvCache::RowBytes(config);
}

uint64_t PrefixCache::ChainHash(uint64_t parent, std::span<const TokenId> block, uint64_t scope) const {
  uint64_t h = Mix(parent, block.size());
  if (scope != 0) h = Mix(h, scope);
  for (TokenId t : block) h = Mix(h, static_cast<uint32_t>(t));
  return h;
}

uint64_t PrefixCache::BlockScope(int64_t index, PrefixScope scope) const {
  return (index + 1) * options_.block_tokens <= scope.shared_prefix ? 0 : scope.scope;
}

PrefixCache::Block* PrefixCache::Find(uint64_t hash, uint64_t parent, std::span<const TokenId> block,
                                      uint64_t scope) {
  auto it = blocks_.find(hash);
  if (it == blocks_.end()) return nullptr;
  Block& b = it->second;
  if (b.parent != parent || b.scope != scope ||
      !std::equal(block.begin(), block.end(), b.tokens.begin(), b.tokens.end()))
    return nullptr;
  return &b;
}

int64_t PrefixCache::Restore(std::span<const TokenId> tokens, int64_t max_positions, KvCache* cache,
                             PrefixScope scope) {
  if (!enabled()) return 0;
  ++stats_.queries;
  const int64_t bt = options_.block_tokens;
  const int64_t n_blocks = std::min<int64_t>(static_cast<int64_t>(tokens.size()), max_positions) / bt;
  std::vector<Block*> chain;
  uint64_t parent = 0;
  for (int64_t i = 0; i < n_blocks; ++i) {
    auto block = tokens.subspan(i * bt, bt);
    const uint64_t s = BlockScope(i, scope);
    const uint64_t h = ChainHash(parent, block, s);
    Block* b = Find(h, parent, block, s);
    if (b == nullptr) break;
    chain.push_back(b);
    parent = h;
  }
  if (chain.empty()) return 0;
  const int64_t n = static_cast<int64_t>(chain.size()) * bt;
  const size_t w = cache->row_bytes();
  for (int layer = 0; layer < cache->n_layer(); ++layer) {
    // Only the positions the layer keeps at n (a sliding layer: its window).
    for (int64_t p = std::max<int64_t>(0, n - cache->slots(layer)); p < n; ++p) {
      const uint8_t* base = chain[p / bt]->kv.data() + static_cast<size_t>(layer) * 2 * bt * w;
      std::memcpy(cache->k_bytes(layer, p), base + (p % bt) * w, w);
      std::memcpy(cache->v_bytes(layer, p), base + (bt + p % bt) * w, w);
    }
  }
  cache->Advance(n);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) lru_.splice(lru_.begin(), lru_, (*it)->lru);
  ++stats_.hits;
  stats_.hit_tokens += n;
  return n;
}

void PrefixCache::Store(std::span<const TokenId> tokens, int64_t limit, const KvCache& cache,
                        PrefixScope scope) {
  if (!enabled()) return;
  const int64_t bt = options_.block_tokens;
  const int64_t n_blocks = std::min<int64_t>(static_cast<int64_t>(tokens.size()), limit) / bt;
  const size_t w = cache.row_bytes();
  std::vector<Block*> chain;
  uint64_t parent = 0;
  for (int64_t i = 0; i < n_blocks; ++i) {
    auto block = tokens.subspan(i * bt, bt);
    const uint64_t s = BlockScope(i, scope);
    const uint64_t h = ChainHash(parent, block, s);
    Block* kept = Find(h, parent, block, s);
    if (kept == nullptr) {
      if (blocks_.count(h) != 0) break;  // a colliding block holds the name: keep it
      bool held = true;
      for (int layer = 0; layer < cache.n_layer(); ++layer)
        held = held && cache.Holds(layer, i * bt) && cache.Holds(layer, i * bt + bt - 1);
      if (!held) break;
      Block b;
      b.parent = parent;
      b.scope = s;
      b.tokens.assign(block.begin(), block.end());
      b.kv.resize(block_bytes_);
      for (int layer = 0; layer < cache.n_layer(); ++layer) {
        uint8_t* base = b.kv.data() + static_cast<size_t>(layer) * 2 * bt * w;
        for (int64_t j = 0; j < bt; ++j) {
          std::memcpy(base + j * w, cache.k_bytes(layer, i * bt + j), w);
          std::memcpy(base + (bt + j) * w, cache.v_bytes(layer, i * bt + j), w);
        }
      }
      lru_.push_front(h);
      b.lru = lru_.begin();
      kept = &blocks_.emplace(h, std::move(b)).first->second;
      stats_.bytes += block_bytes_;
      ++stats_.blocks;
    }
    chain.push_back(kept);
    parent = h;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) lru_.splice(lru_.begin(), lru_, (*it)->lru);
  Evict();
}

void PrefixCache::Evict() {
  while (stats_.bytes > options_.max_bytes && !lru_.empty()) {
    blocks_.erase(lru_.back());
    lru_.pop_back();
    stats_.bytes -= block_bytes_;
    --stats_.blocks;
  }
}

}  // namespace ragd::inference
