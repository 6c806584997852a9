// Keys and values of prompt prefixes already computed, kept for later
// requests that start the same way (the RAG rules text, a chat's history).
//
// A prompt is cut into blocks of `block_tokens` tokens. Block i is named by a
// hash chained over every token of blocks 0..i, so it matches only behind the
// very same prefix; its tokens are kept and compared too, so a hash collision
// can never hand out the wrong keys. A block holds the keys and values of its
// positions for every layer (sliding layers included: a later prompt may stop
// anywhere inside the window). Blocks are dropped least-recently-used first
// once their bytes pass the budget; a lookup touches a chain from its last
// block back to its first, so the shared roots are the last to go.
//
// A block may be scoped (GenerationRequest::cache_scope): one that ends past
// the request's shared prefix is named and matched with the scope too, so
// another scope neither reuses it nor learns from a hit that it exists.
//
// Thread-safety: none; the scheduler's loop thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

#include "inference/models/model.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

struct PrefixCacheOptions {
  int block_tokens = 16;               // tokens per block (>= 1)
  size_t max_bytes = size_t{1} << 30;  // blocks kept at most; 0 = cache off
};

// Which blocks of a prompt any request may share: those within its first
// `shared_prefix` tokens; the rest belong to `scope` (0: everyone's).
struct PrefixScope {
  uint64_t scope = 0;
  int64_t shared_prefix = 0;
};

struct PrefixCacheStats {
  uint64_t queries = 0;     // Restore() calls
  uint64_t hits = 0;        // of which restored at least one block
  uint64_t hit_tokens = 0;  // prompt positions restored in all
  size_t bytes = 0;         // memory held by the blocks
  size_t blocks = 0;
};

class PrefixCache {
 public:
  PrefixCache(const ModelConfig& config, PrefixCacheOptions options);

  // Copies the longest cached run of whole blocks at the start of `tokens`,
  // at most `max_positions` positions, into `cache` (which must be empty and
  // large enough) and advances it. Returns the positions restored (0: miss).
  int64_t Restore(std::span<const TokenId> tokens, int64_t max_positions, KvCache* cache,
                  PrefixScope scope = {});

  // Keeps the whole blocks of `tokens[0, limit)` that `cache` computed and
  // still holds in every layer, and that are not kept already. `cache` must
  // have been filled from these very tokens.
  void Store(std::span<const TokenId> tokens, int64_t limit, const KvCache& cache, PrefixScope scope = {});

  const PrefixCacheStats& stats() const { return stats_; }
  bool enabled() const { return options_.max_bytes > 0; }
  int block_tokens() const { return options_.block_tokens; }

 private:
  struct Block {
    uint64_t parent = 0;
    uint64_t scope = 0;  // 0 for a block any request may share
    std::vector<TokenId> tokens;
    std::vector<uint8_t> kv;  // per layer: K rows then V rows, block_tokens rows each, in the caches' kind
    std::list<uint64_t>::iterator lru;
  };
  uint64_t ChainHash(uint64_t parent, std::span<const TokenId> block, uint64_t scope) const;
  // The scope block `index` (of block_tokens tokens) belongs to.
  uint64_t BlockScope(int64_t index, PrefixScope scope) const;
  // The kept block for `hash` if it really is `block` of `scope` behind `parent`.
  Block* Find(uint64_t hash, uint64_t parent, std::span<const TokenId> block, uint64_t scope);
  void Evict();

  ModelConfig config_;
  PrefixCacheOptions options_;
  size_t block_bytes_ = 0;
  std::unordered_map<uint64_t, Block> blocks_;
  std::list<uint64_t> lru_;  // most recently used first
  PrefixCacheStats stats_;
};

}  // namespace ragd::inference
