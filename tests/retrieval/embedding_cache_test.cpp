#include "retrieval/embedding_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ragd::retrieval {
namespace {

// Embeds a text as {its length, its first byte}, and remembers every call.
struct Recorder {
  std::vector<std::vector<std::string>> calls;
  bool fail = false;
  EmbedTextsFn Fn() {
    return [this](const std::vector<std::string>& texts) -> Result<std::vector<std::vector<float>>> {
      calls.push_back(texts);
      if (fail) return Status::Unavailable("no model");
      std::vector<std::vector<float>> out;
      for (const std::string& t : texts)
        out.push_back({static_cast<float>(t.size()), t.empty() ? 0.f : static_cast<float>(t[0])});
      return out;
    };
  }
};

TEST(EmbeddingCacheTest, EmbedsOnlyTheTextsNotSeenBefore) {
  Recorder r;
  EmbeddingCache cache(r.Fn(), 10);
  auto first = cache.Embed({"alpha", "be"});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)[0], (std::vector<float>{5, 'a'}));
  auto second = cache.Embed({"be", "gamma", "alpha"});
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[1], std::vector<std::string>{"gamma"});  // one call, for the new text only
  EXPECT_EQ((*second)[0], (std::vector<float>{2, 'b'}));
  EXPECT_EQ((*second)[1], (std::vector<float>{5, 'g'}));
  EXPECT_EQ((*second)[2], (std::vector<float>{5, 'a'}));
  // All cached: no call at all.
  ASSERT_TRUE(cache.Embed({"alpha", "gamma"}).ok());
  EXPECT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(cache.hits(), 4u);
  EXPECT_EQ(cache.misses(), 3u);
}

TEST(EmbeddingCacheTest, EvictsTheLeastRecentlyUsed) {
  Recorder r;
  EmbeddingCache cache(r.Fn(), 2);
  ASSERT_TRUE(cache.Embed({"a1", "b1"}).ok());
  ASSERT_TRUE(cache.Embed({"a1"}).ok());  // a1 is now the more recent
  ASSERT_TRUE(cache.Embed({"c1"}).ok());  // b1 goes
  EXPECT_EQ(cache.size(), 2u);
  r.calls.clear();
  ASSERT_TRUE(cache.Embed({"a1", "c1", "b1"}).ok());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0], std::vector<std::string>{"b1"});
  EXPECT_EQ(cache.size(), 2u);
}

TEST(EmbeddingCacheTest, ErrorsAreReturnedAndNothingIsCached) {
  Recorder r;
  EmbeddingCache cache(r.Fn(), 10);
  r.fail = true;
  EXPECT_EQ(cache.Embed({"alpha"}).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(cache.size(), 0u);
  r.fail = false;
  auto v = cache.Embed({"alpha", "alpha"});  // a repeat inside one batch is embedded once per position
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)[0], (*v)[1]);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(EmbeddingCacheTest, AWrongNumberOfVectorsIsAnError) {
  EmbedTextsFn one_short =
      [](const std::vector<std::string>& texts) -> Result<std::vector<std::vector<float>>> {
    return std::vector<std::vector<float>>(texts.size() - 1, std::vector<float>{1.f});
  };
  EmbeddingCache cache(one_short, 10);
  EXPECT_EQ(cache.Embed({"alpha", "beta"}).status().code(), StatusCode::kInternal);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(EmbeddingCacheTest, CapacityZeroCachesNothing) {
  Recorder r;
  EmbeddingCache cache(r.Fn(), 0);
  ASSERT_TRUE(cache.Embed({"alpha"}).ok());
  ASSERT_TRUE(cache.Embed({"alpha"}).ok());
  EXPECT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace ragd::retrieval
