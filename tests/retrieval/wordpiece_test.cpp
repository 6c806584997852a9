#include "retrieval/wordpiece.h"

#include <gtest/gtest.h>

namespace ragd::retrieval {
namespace {

WordPieceTokenizer Tiny() {
  auto t = WordPieceTokenizer::FromTokens({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able",
                                           "hello", ",", "!", "world", "cafe", "中", "a", "##a", "the"});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t.value());
}

std::vector<int32_t> Ids(const std::vector<TokenSpan>& spans) {
  std::vector<int32_t> ids;
  for (const auto& s : spans) ids.push_back(s.id);
  return ids;
}

TEST(WordPieceTest, GreedyLongestMatchWithContinuations) {
  auto t = Tiny();
  EXPECT_EQ(Ids(t.Tokenize("unaffable")), (std::vector<int32_t>{4, 5, 6}));
}

TEST(WordPieceTest, PunctuationCaseAndAccents) {
  auto t = Tiny();
  EXPECT_EQ(Ids(t.Tokenize("Hello,WORLD!  Café")), (std::vector<int32_t>{7, 8, 10, 9, 11}));
}

TEST(WordPieceTest, UnknownWordBecomesOneUnk) {
  auto t = Tiny();
  // "unx": "un" matches but "##x" does not, so the whole word is [UNK].
  EXPECT_EQ(Ids(t.Tokenize("the unx the")), (std::vector<int32_t>{15, 1, 15}));
}

TEST(WordPieceTest, OverlongWordIsUnk) {
  auto t = Tiny();
  EXPECT_EQ(Ids(t.Tokenize(std::string(100, 'a'))).size(), 100u);  // a ##a x 99
  EXPECT_EQ(Ids(t.Tokenize(std::string(101, 'a'))), (std::vector<int32_t>{1}));
}

TEST(WordPieceTest, CjkIsSplitAndControlsDropped) {
  auto t = Tiny();
  EXPECT_EQ(Ids(t.Tokenize("the中the")), (std::vector<int32_t>{15, 12, 15}));
  EXPECT_EQ(Ids(t.Tokenize("th\x01"
                           "e")),
            (std::vector<int32_t>{15}));  // control dropped inside a word
  // NUL is dropped, not a separator: "thethe" has no "##the" -> [UNK].
  EXPECT_EQ(Ids(t.Tokenize(std::string("the\0the", 7))), (std::vector<int32_t>{1}));
}

TEST(WordPieceTest, SpansPointIntoTheSource) {
  auto t = Tiny();
  const std::string text = "  Café, unaffable";
  auto spans = t.Tokenize(text);
  ASSERT_EQ(spans.size(), 5u);
  EXPECT_EQ(text.substr(spans[0].begin, spans[0].end - spans[0].begin), "Café");
  EXPECT_EQ(text.substr(spans[1].begin, spans[1].end - spans[1].begin), ",");
  EXPECT_EQ(text.substr(spans[3].begin, spans[3].end - spans[3].begin), "aff");
}

TEST(WordPieceTest, EncodeWrapsAndTruncates) {
  auto t = Tiny();
  EXPECT_EQ(t.Encode("hello world", 256), (std::vector<int32_t>{2, 7, 10, 3}));
  EXPECT_EQ(t.Encode("hello world the", 3), (std::vector<int32_t>{2, 7, 3}));
  EXPECT_EQ(t.Encode("", 256), (std::vector<int32_t>{2, 3}));
}

TEST(WordPieceTest, InvalidUtf8IsDropped) {
  auto t = Tiny();
  EXPECT_EQ(Ids(t.Tokenize("the\xff\xfe the")), (std::vector<int32_t>{15, 15}));
}

TEST(WordPieceTest, VocabularyWithoutSpecialsIsRejected) {
  EXPECT_FALSE(WordPieceTokenizer::FromTokens({"a", "b"}).ok());
  EXPECT_EQ(WordPieceTokenizer::Load("/nonexistent/vocab.txt").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ragd::retrieval
