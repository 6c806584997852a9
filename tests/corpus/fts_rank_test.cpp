// ragd_bm25 (corpus/fts_rank.h) must give exactly FTS5's bm25() for every
// matching row, whether the row sizes come from the preloaded cache, from
// FTS5 on a cache miss, or for rows added after the cache was filled.
#include "corpus/fts_rank.h"

#include <gtest/gtest.h>

#include <random>

#include "corpus/sha256.h"
#include "corpus/sqlite_db.h"
#include "corpus/store.h"
#include "tests/corpus/test_util.h"

namespace ragd::corpus {
namespace {

using internal::Db;
using internal::RowSizeCache;
using testing::TempDir;

// A document of `chunks` chunks of random length (3 to 120 words) over a
// small vocabulary, some with a heading, so that lengths, term frequencies and
// both columns vary.
NewDocument RandomDocument(int number, int chunks, std::mt19937& rng) {
  static const char* kWords[] = {"alpha", "beta",  "gamma", "delta", "omega", "river", "stone",
                                 "apple", "zebra", "cloud", "night", "paper", "glass", "metal"};
  NewDocument doc;
  doc.title = "doc " + std::to_string(number);
  doc.source_name = doc.title;
  doc.media_type = "text/plain";
  std::uniform_int_distribution<int> length(3, 120), word(0, static_cast<int>(std::size(kWords)) - 1);
  for (int c = 0; c < chunks; ++c) {
    NewChunk chunk;
    const int n = length(rng);
    for (int w = 0; w < n; ++w) chunk.text += std::string(w ? " " : "") + kWords[word(rng) % (w % 3 + 5)];
    if (c % 3 == 0) chunk.heading_context = std::string("Guide > ") + kWords[word(rng)];
    chunk.start = static_cast<int64_t>(doc.text.size());
    doc.text += chunk.text;
    chunk.end = static_cast<int64_t>(doc.text.size());
    doc.text += "\n\n";
    doc.chunks.push_back(chunk);
  }
  doc.byte_size = static_cast<int64_t>(doc.text.size());
  doc.sha256 = Sha256Hex(doc.text);
  return doc;
}

// (rowid, bm25, ragd_bm25) of every row matching `match`.
std::vector<std::tuple<int64_t, double, double>> BothScores(Db& db, const std::string& match) {
  auto stmt = db.Prepare(
      "SELECT rowid, bm25(chunks_fts, 1.0, 0.5), ragd_bm25(chunks_fts, 1.0, 0.5) FROM chunks_fts "
      "WHERE chunks_fts MATCH ?1");
  EXPECT_TRUE(stmt.ok());
  std::vector<std::tuple<int64_t, double, double>> rows;
  if (!stmt.ok()) return rows;
  stmt->BindText(1, match);
  for (;;) {
    auto row = stmt->Step();
    EXPECT_TRUE(row.ok());
    if (!row.ok() || !*row) return rows;
    rows.emplace_back(stmt->ColumnInt(0), stmt->ColumnDouble(1), stmt->ColumnDouble(2));
  }
}

void ExpectSameScores(Db& db, const std::string& when) {
  for (const char* match : {"\"alpha\"", "\"zebra\" OR \"river\"", "\"guide\" OR \"apple\" OR \"omega\"",
                            "\"metal\" OR \"glass\" OR \"paper\" OR \"night\"", "\"nothing\""}) {
    const auto rows = BothScores(db, match);
    for (const auto& [rowid, want, got] : rows) {
      EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::abs(want)))
          << when << ": " << match << " row " << rowid;
    }
  }
}

TEST(FtsRankTest, MatchesFts5Bm25) {
  TempDir dir;
  const std::string path = dir.File("corpus.db");
  std::mt19937 rng(3);
  {
    auto store = Store::Open({.path = path});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (int d = 0; d < 6; ++d) ASSERT_TRUE((*store)->AddDocument(RandomDocument(d, 40, rng)).ok());
    auto hits = (*store)->SearchLexical("zebra river", 5);  // the store's own path runs
    ASSERT_TRUE(hits.ok()) << hits.status().ToString();
    EXPECT_EQ(hits->size(), 5u);
  }
  auto db = Db::Open(path, 1000);
  ASSERT_TRUE(db.ok());

  RowSizeCache empty;  // every size comes from FTS5 and is cached on the way
  ASSERT_TRUE(internal::RegisterBm25(**db, &empty).ok());
  ExpectSameScores(**db, "cold cache");
  EXPECT_GT(empty.count(), 0);
  ExpectSameScores(**db, "filled on the way");

  RowSizeCache preloaded;  // sizes parsed from chunks_fts_docsize
  ASSERT_TRUE(internal::LoadRowSizes(**db, "chunks_fts", preloaded).ok());
  EXPECT_EQ(preloaded.count(), 240);
  for (int64_t id = 0; id < 400; ++id) EXPECT_EQ(preloaded.Get(id), empty.Get(id)) << "row " << id;
  ASSERT_TRUE(internal::RegisterBm25(**db, &preloaded).ok());
  ExpectSameScores(**db, "preloaded");

  // Rows added after the preload are missing from the cache and still right.
  {
    auto store = Store::Open({.path = path});
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->AddDocument(RandomDocument(100, 30, rng)).ok());
  }
  ExpectSameScores(**db, "after more rows");
}

NewDocument DocumentOfChunks(const std::string& title, const std::vector<std::string>& chunks) {
  NewDocument doc;
  doc.title = title;
  doc.source_name = title;
  doc.media_type = "text/plain";
  for (const std::string& text : chunks) {
    NewChunk chunk;
    chunk.text = text;
    chunk.start = static_cast<int64_t>(doc.text.size());
    doc.text += text;
    chunk.end = static_cast<int64_t>(doc.text.size());
    doc.text += "\n\n";
    doc.chunks.push_back(chunk);
  }
  doc.byte_size = static_cast<int64_t>(doc.text.size());
  doc.sha256 = Sha256Hex(doc.text);
  return doc;
}

std::vector<ChunkId> IdsOf(const std::vector<LexicalHit>& hits) {
  std::vector<ChunkId> ids;
  for (const auto& h : hits) ids.push_back(h.chunk_id);
  return ids;
}

// SearchLexical's pruning (store.h): on a query mixing selective and common
// terms, the result is the exact BM25 ranking restricted to chunks holding a
// selective term, and the full ranking whenever that finds fewer than top_k.
TEST(FtsRankTest, PrunedSearchRanksChunksWithSelectiveTerms) {
  TempDir dir;
  const std::string path = dir.File("corpus.db");
  // 100 chunks: "omega" in 21 of them (common at a 0.2 threshold), "rare" in
  // 10 three times longer ones, "scarce" in 3; one short chunk is all
  // "omega" and outranks the long "rare" chunks on "rare omega".
  std::vector<std::string> chunks;
  std::string filler;
  for (int w = 0; w < 60; ++w) filler += " alpha beta";
  for (int c = 0; c < 100; ++c) {
    std::string text = "delta" + filler;
    if (c < 20) text += " omega";
    if (c >= 50 && c < 60) text += filler + filler + " rare";
    if (c >= 60 && c < 63) text += " scarce";
    chunks.push_back(text);
  }
  chunks.back() = "omega omega omega omega omega";
  {
    auto store = Store::Open({.path = path});
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->AddDocument(DocumentOfChunks("pruning", chunks)).ok());
  }
  auto exact = Store::Open({.path = path, .lexical_prune_from_chunks = int64_t{1} << 40});
  auto pruned = Store::Open({.path = path, .lexical_prune_from_chunks = 0, .lexical_common_fraction = 0.2});
  ASSERT_TRUE(exact.ok() && pruned.ok());

  auto all = (*exact)->SearchLexical("rare omega", 1000);
  auto holding = (*exact)->SearchLexical("rare", 1000);
  ASSERT_TRUE(all.ok() && holding.ok());
  ASSERT_EQ(holding->size(), 10u);
  const ChunkId omega_only = all->front().chunk_id;  // the short all-omega chunk ranks first in full
  std::vector<LexicalHit> want;
  for (const auto& h : *all) {
    for (const auto& r : *holding) {
      if (r.chunk_id == h.chunk_id) want.push_back(h);
    }
  }
  ASSERT_EQ(want.size(), 10u);
  EXPECT_NE(want.front().chunk_id, omega_only);
  want.resize(5);
  auto got = (*pruned)->SearchLexical("rare omega", 5);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(IdsOf(*got), IdsOf(want));
  for (size_t i = 0; i < got->size() && i < want.size(); ++i) {
    EXPECT_NEAR((*got)[i].score, want[i].score, 1e-9);  // scored on every term
  }

  // Too few chunks hold the selective term for top_k: the full ranking.
  auto few = (*pruned)->SearchLexical("scarce omega", 5);
  auto few_full = (*exact)->SearchLexical("scarce omega", 5);
  ASSERT_TRUE(few.ok() && few_full.ok());
  EXPECT_EQ(IdsOf(*few), IdsOf(*few_full));
  // A term found nowhere is not selective; the other terms still rank.
  auto absent = (*pruned)->SearchLexical("zzyzx omega", 5);
  auto absent_full = (*exact)->SearchLexical("zzyzx omega", 5);
  ASSERT_TRUE(absent.ok() && absent_full.ok());
  EXPECT_EQ(absent->size(), 5u);
  EXPECT_EQ(IdsOf(*absent), IdsOf(*absent_full));
  // A document filter is never pruned.
  const DocumentId doc = 1;
  auto filtered = (*pruned)->SearchLexical("rare omega", 5, std::span<const DocumentId>(&doc, 1));
  ASSERT_TRUE(filtered.ok());
  ASSERT_FALSE(filtered->empty());
  EXPECT_EQ(filtered->front().chunk_id, omega_only);
}

TEST(FtsRankTest, RowSizeCacheBounds) {
  RowSizeCache cache;
  EXPECT_EQ(cache.Get(5), -1);
  cache.Put(5, 17);
  cache.Put(70000, 3);
  cache.Put(-1, 4);                // ignored
  cache.Put(int64_t{1} << 40, 4);  // ignored
  EXPECT_EQ(cache.Get(5), 17);
  EXPECT_EQ(cache.Get(70000), 3);
  EXPECT_EQ(cache.Get(6), -1);
  EXPECT_EQ(cache.Get(-1), -1);
  EXPECT_EQ(cache.Get(int64_t{1} << 40), -1);
  EXPECT_EQ(cache.count(), 2);
}

}  // namespace
}  // namespace ragd::corpus
