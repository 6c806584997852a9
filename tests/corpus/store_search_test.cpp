// Lexical search: BM25 order, document filter, and user text that must never
// break the FTS5 query syntax.
#include <gtest/gtest.h>

#include "corpus/sha256.h"
#include "corpus/store.h"
#include "tests/corpus/test_util.h"

namespace ragd::corpus {
namespace {

using testing::DocumentOf;

// Runs on SQLite and on the test PostgreSQL.
class StoreSearch : public testing::EngineTest {
 protected:
  void SetUp() override {
    store_ = OpenStore();
    ASSERT_TRUE(store_);
    auto a = store_->AddDocument(DocumentOf(
        "Animals",
        {{"", "The zebra crossing is painted white."},
         {"", "NEAR field communication needs phones within centimetres."},
         {"", "C++ templates are compiled for each type."},
         {"", "A naïve café serves crème brûlée."},
         {"", "日本語 テキスト の 検索"},
         {"Installation", "Run the script and wait."},
         {"", "apple apple apple"},
         {"", "An apple fell from the tree in the orchard near the old stone wall by the river."}}));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    animals_ = *a;
    auto b =
        store_->AddDocument(DocumentOf("Fruit", {{"", "The apple harvest was shared among neighbours."}}));
    ASSERT_TRUE(b.ok());
    fruit_ = *b;
  }

  std::vector<LexicalHit> Search(std::string_view q, int k = 10, std::span<const DocumentId> docs = {}) {
    auto hits = store_->SearchLexical(q, k, docs);
    EXPECT_TRUE(hits.ok()) << "query [" << q << "]: " << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<LexicalHit>{};
  }

  std::unique_ptr<Store> store_;
  AddResult animals_, fruit_;
};

RAGD_ON_BOTH_ENGINES(StoreSearch);

// BM25's own order (FTS5): SQLite only; store_postgres_test.cpp has
// PostgreSQL's ranking.
class StoreSearchBm25 : public StoreSearch {};
INSTANTIATE_TEST_SUITE_P(, StoreSearchBm25, ::testing::Values(std::string("sqlite")),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(BuildFtsQuery, QuotesEveryTermAndDropsSyntax) {
  EXPECT_EQ(BuildFtsQuery("hello world"), "\"hello\" OR \"world\"");
  EXPECT_EQ(BuildFtsQuery("NEAR(x y) AND \"c\" OR -d* ^e text:f"),
            "\"NEAR\" OR \"x\" OR \"y\" OR \"c\" OR \"d\" OR \"e\" OR \"text\" OR \"f\"");
  // Function words are dropped unless nothing else is left.
  EXPECT_EQ(BuildFtsQuery("What is the voltage of a cell?"), "\"voltage\" OR \"cell\"");
  EXPECT_EQ(BuildFtsQuery("The Who"), "\"The\" OR \"Who\"");
  EXPECT_EQ(BuildFtsQuery("Hello hello HELLO"), "\"Hello\"");
  EXPECT_EQ(BuildFtsQuery("café"), "\"café\"");
  EXPECT_EQ(BuildFtsQuery(""), "");
  EXPECT_EQ(BuildFtsQuery("  *** ( ) \" ' : ^ - + {} "), "");
}

TEST_P(StoreSearch, HostileInputNeverErrors) {
  const std::vector<std::string> hostile = {
      "\"",
      "\"\"",
      "\"unbalanced",
      "(",
      ")",
      "((a)",
      "NEAR(",
      "NEAR(a b, 2)",
      "NEAR",
      "a AND",
      "OR",
      "NOT x",
      "AND OR NOT",
      "*",
      "zeb*",
      "^zebra",
      "-zebra",
      "+zebra",
      "text:zebra",
      "heading:x",
      "{text heading}: zebra",
      "'; DROP TABLE chunks; --",
      std::string("ze\0bra", 6),
      "—",
      "😀",
      "\xff\xfe\xfd",
      "\\",
      "%",
      "_",
      "zebra\"OR\"1",
      std::string(20000, 'a'),
      std::string(5000, '('),
      "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8"
      " 9 aa bb cc dd ee ff gg hh ii jj kk ll mm nn oo pp qq rr ss tt uu vv ww xx yy zz a1 b1 c1 d1 e1 f1 g1 "
      "h1 i1 j1"};
  for (const std::string& q : hostile) {
    auto hits = store_->SearchLexical(q, 5);
    EXPECT_TRUE(hits.ok()) << "query [" << q.substr(0, 40) << "]: " << hits.status().ToString();
  }
}

TEST_P(StoreSearch, HostileInputStillFindsTheRightChunk) {
  const std::pair<std::string, std::string> cases[] = {
      {"\"zebra", "The zebra crossing is painted white."},
      {"zebra*", "The zebra crossing is painted white."},
      {"-zebra", "The zebra crossing is painted white."},
      {"text:zebra", "The zebra crossing is painted white."},
      {"(zebra OR", "The zebra crossing is painted white."},
      {"NEAR(field", "NEAR field communication needs phones within centimetres."},
      {"c++ templates?", "C++ templates are compiled for each type."},
      {"crème", "A naïve café serves crème brûlée."},
      {"\"テキスト\"", "日本語 テキスト の 検索"},
      {"installation:", "Run the script and wait."},  // found through its heading
  };
  for (const auto& [query, expected] : cases) {
    const auto hits = Search(query, 3);
    ASSERT_FALSE(hits.empty()) << query;
    auto chunk = store_->GetChunks(std::vector<ChunkId>{hits[0].chunk_id});
    ASSERT_EQ(chunk->size(), 1u);
    EXPECT_EQ((*chunk)[0].text, expected) << query;
  }
}

TEST_P(StoreSearchBm25, FoldsDiacritics) {
  // FTS5's tokenizer folds diacritics; PostgreSQL's configurations do not.
  const auto hits = Search("CAFE", 3);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(store_->GetChunks(std::vector<ChunkId>{hits[0].chunk_id}).value()[0].text,
            "A naïve café serves crème brûlée.");
}

TEST_P(StoreSearch, EmptyQueriesReturnNothing) {
  EXPECT_TRUE(Search("").empty());
  EXPECT_TRUE(Search("   ").empty());
  EXPECT_TRUE(Search("*** () \"\"").empty());
  EXPECT_TRUE(Search("zebra", 0).empty());
  EXPECT_TRUE(Search("unmatchedword").empty());
}

TEST_P(StoreSearchBm25, OrdersByRelevance) {
  const auto hits = Search("apple");
  ASSERT_EQ(hits.size(), 3u);
  // The short chunk that repeats the term beats the long ones that mention it once.
  EXPECT_EQ(hits[0].chunk_id, animals_.chunk_ids[6]);
  for (size_t i = 0; i + 1 < hits.size(); ++i) EXPECT_GE(hits[i].score, hits[i + 1].score);
  for (const LexicalHit& h : hits) EXPECT_GT(h.score, 0);
  // More matching terms rank higher.
  const auto two = Search("apple orchard");
  ASSERT_FALSE(two.empty());
  EXPECT_EQ(two[0].chunk_id, animals_.chunk_ids[7]);
  EXPECT_EQ(Search("apple", 2).size(), 2u);
}

TEST_P(StoreSearch, DocumentFilter) {
  const std::vector<DocumentId> only_fruit = {fruit_.id};
  auto hits = Search("apple", 10, only_fruit);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].document_id, fruit_.id);
  EXPECT_EQ(hits[0].chunk_id, fruit_.chunk_ids[0]);
  const std::vector<DocumentId> both = {fruit_.id, animals_.id};
  EXPECT_EQ(Search("apple", 10, both).size(), 3u);
  const std::vector<DocumentId> nobody = {987654};
  EXPECT_TRUE(Search("apple", 10, nobody).empty());
}

}  // namespace
}  // namespace ragd::corpus
