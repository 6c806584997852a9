// The prefix cache on a tiny random-weight Gemma: restored keys/values equal
// computed ones bit for bit, chains only match behind the same prefix, and the
// byte budget holds.
#include "inference/prefix_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "inference/gguf.h"
#include "tests/inference/model/tiny_gemma.h"

namespace ragd::inference {
namespace {

struct Tiny {
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Model> model;
  std::unique_ptr<ThreadPool> pool = std::make_unique<ThreadPool>(1);
};

Tiny& Shared() {
  static Tiny t = [] {
    Tiny l;
    testing::TinyGemmaSpec spec;
    spec.sliding_window = 8;  // two blocks of 4
    const std::string path = "/tmp/ragd_prefix_cache_" + std::to_string(getpid()) + ".gguf";
    testing::WriteTinyGemma(spec, path);
    auto f = GgufFile::Open(path);
    EXPECT_TRUE(f.ok());
    l.file = std::make_unique<GgufFile>(std::move(f).value());
    auto m = LoadModel(*l.file);
    EXPECT_TRUE(m.ok());
    l.model = std::move(m).value();
    std::remove(path.c_str());
    return l;
  }();
  return t;
}

std::vector<TokenId> Tokens(int n, int seed) {
  std::vector<TokenId> t(n);
  for (int i = 0; i < n; ++i) t[i] = (i * 7 + seed * 13 + 3) % 80;
  return t;
}

// Runs `tokens` into `cache` in chunks of `chunk`, offering each chunk's
// blocks to `pc` (if any) as the scheduler does.
void Fill(KvCache* cache, const std::vector<TokenId>& tokens, int64_t from, int chunk,
          PrefixCache* pc = nullptr) {
  std::vector<float> logits;
  for (int64_t p = from; p < static_cast<int64_t>(tokens.size()); p += chunk) {
    SequenceStep st;
    st.cache = cache;
    st.tokens = std::span<const TokenId>(tokens).subspan(p, std::min<int64_t>(chunk, tokens.size() - p));
    st.logits = &logits;
    ASSERT_TRUE(Shared().model->Forward(std::span<SequenceStep>(&st, 1), Shared().pool.get()).ok());
    if (pc != nullptr) pc->Store(tokens, cache->n_past(), *cache);
  }
}

// Logits of `next` after the cache's history.
std::vector<float> NextLogits(KvCache* cache, TokenId next) {
  std::vector<float> logits;
  SequenceStep st;
  st.cache = cache;
  st.tokens = std::span<const TokenId>(&next, 1);
  st.logits = &logits;
  EXPECT_TRUE(Shared().model->Forward(std::span<SequenceStep>(&st, 1), Shared().pool.get()).ok());
  return logits;
}

TEST(PrefixCache, RestoredPrefixContinuesExactlyLikeTheComputedOne) {
  const ModelConfig& c = Shared().model->config();
  PrefixCache pc(c, {.block_tokens = 4, .max_bytes = size_t{1} << 20});
  const auto shared = Tokens(14, 1);
  auto a = shared;
  a.push_back(5);
  auto warm_src = Shared().model->NewCache(32);
  Fill(warm_src.get(), a, 0, 3, &pc);
  EXPECT_EQ(pc.stats().blocks, 3u);  // 15 tokens: three whole blocks of 4

  auto b = shared;
  b.push_back(9);
  b.push_back(10);
  auto cold = Shared().model->NewCache(32);
  Fill(cold.get(), b, 0, 17);
  auto warm = Shared().model->NewCache(32);
  const int64_t restored = pc.Restore(b, static_cast<int64_t>(b.size()) - 1, warm.get());
  EXPECT_EQ(restored, 12);
  EXPECT_EQ(warm->n_past(), 12);
  Fill(warm.get(), b, restored, 17);
  EXPECT_EQ(NextLogits(cold.get(), 1), NextLogits(warm.get(), 1));
  EXPECT_EQ(pc.stats().queries, 1u);
  EXPECT_EQ(pc.stats().hits, 1u);
  EXPECT_EQ(pc.stats().hit_tokens, 12u);
}

TEST(PrefixCache, MatchesOnlyBehindTheSamePrefix) {
  const ModelConfig& c = Shared().model->config();
  PrefixCache pc(c, {.block_tokens = 4, .max_bytes = size_t{1} << 20});
  const auto a = Tokens(12, 2);
  auto cache = Shared().model->NewCache(32);
  Fill(cache.get(), a, 0, 4, &pc);
  // Same second block, different first block: nothing matches.
  auto b = a;
  b[0] = (b[0] + 1) % 80;
  auto other = Shared().model->NewCache(32);
  EXPECT_EQ(pc.Restore(b, 11, other.get()), 0);
  // At most max_positions, in whole blocks.
  auto third = Shared().model->NewCache(32);
  EXPECT_EQ(pc.Restore(a, 7, third.get()), 4);
}

TEST(PrefixCache, KeepsWithinItsBudgetDroppingTheLeastRecentlyUsed) {
  const ModelConfig& c = Shared().model->config();
  const size_t block = static_cast<size_t>(c.n_layer) * 2 * 4 * KvCache::RowBytes(c);
  PrefixCache pc(c, {.block_tokens = 4, .max_bytes = 5 * block});
  const auto first = Tokens(12, 3), second = Tokens(12, 4);
  auto c1 = Shared().model->NewCache(32), c2 = Shared().model->NewCache(32);
  Fill(c1.get(), first, 0, 4, &pc);
  Fill(c2.get(), second, 0, 4, &pc);
  EXPECT_LE(pc.stats().bytes, 5 * block);
  EXPECT_EQ(pc.stats().blocks, 5u);
  auto r = Shared().model->NewCache(32);
  EXPECT_EQ(pc.Restore(second, 12, r.get()), 12);  // the newest chain is whole
  auto r1 = Shared().model->NewCache(32);
  EXPECT_EQ(pc.Restore(first, 12, r1.get()), 8);  // the oldest chain lost its last block
  PrefixCache off(c, {.block_tokens = 4, .max_bytes = 0});
  auto c3 = Shared().model->NewCache(32);
  Fill(c3.get(), first, 0, 4, &off);
  auto r2 = Shared().model->NewCache(32);
  EXPECT_EQ(off.Restore(first, 12, r2.get()), 0);
  EXPECT_EQ(off.stats().bytes, 0u);
}

TEST(PrefixCache, SkipsBlocksASlidingLayerNoLongerHolds) {
  const ModelConfig& c = Shared().model->config();
  PrefixCache pc(c, {.block_tokens = 4, .max_bytes = size_t{1} << 20});
  const auto a = Tokens(16, 5);
  auto cache = Shared().model->NewCache(32);
  Fill(cache.get(), a, 0, 16);  // the window (8) holds only the last two blocks
  pc.Store(a, 16, *cache);
  EXPECT_EQ(pc.stats().blocks, 0u);  // block 0 is gone from the sliding layers: no chain
}

}  // namespace
}  // namespace ragd::inference
