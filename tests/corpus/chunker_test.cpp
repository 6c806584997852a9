#include "corpus/chunker.h"

#include <gtest/gtest.h>

#include <random>

#include "common/text.h"
#include "tests/corpus/test_util.h"

namespace ragd::corpus {
namespace {

bool IsSpaceByte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// One token per whitespace-separated word: additive, easy to reason about.
int CountWords(std::string_view s) {
  int n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool space = IsSpaceByte(c);
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

// One token per UTF-8 character (not additive over words: spaces count too).
int CountChars(std::string_view s) {
  int n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string Words(int n, const std::string& stem) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (i > 0) s += ' ';
    s += stem + std::to_string(i);
  }
  return s;
}

// The contract every chunking must keep (see chunker.h).
void CheckInvariants(std::string_view text, const std::vector<TextChunk>& chunks, const TokenCounter& count,
                     const ChunkerOptions& options) {
  std::vector<bool> covered(text.size(), false);
  size_t previous_start = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const TextChunk& c = chunks[i];
    ASSERT_LE(c.end, text.size());
    ASSERT_LT(c.start, c.end);
    EXPECT_EQ(text.substr(c.start, c.end - c.start), c.text) << "chunk " << i;
    EXPECT_FALSE(IsSpaceByte(c.text.front()));
    EXPECT_FALSE(IsSpaceByte(c.text.back()));
    EXPECT_TRUE(IsValidUtf8(c.text)) << "chunk " << i;
    EXPECT_EQ(c.token_count, count(c.text));
    EXPECT_LE(c.token_count, options.target_tokens) << "chunk " << i;
    if (i > 0) {
      EXPECT_GT(c.start, previous_start) << "chunk " << i;
      EXPECT_GT(c.end, chunks[i - 1].end) << "chunk " << i;
    }
    previous_start = c.start;
    for (size_t k = c.start; k < c.end; ++k) covered[k] = true;
  }
  for (size_t k = 0; k < text.size(); ++k) {
    if (!IsSpaceByte(text[k])) {
      ASSERT_TRUE(covered[k]) << "byte " << k << " is in no chunk";
    }
  }
}

TEST(Chunker, RejectsBadOptions) {
  EXPECT_EQ(ChunkText("x", nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ChunkText("x", CountWords, {.target_tokens = 0, .overlap_tokens = 0}).ok());
  EXPECT_FALSE(ChunkText("x", CountWords, {.target_tokens = 10, .overlap_tokens = 10}).ok());
  EXPECT_FALSE(ChunkText("x", CountWords, {.target_tokens = 10, .overlap_tokens = -1}).ok());
}

TEST(Chunker, EmptyTextGivesNoChunks) {
  EXPECT_TRUE(ChunkText("", CountWords)->empty());
  EXPECT_TRUE(ChunkText(" \n\n\t ", CountWords)->empty());
}

TEST(Chunker, ShortTextIsOneChunk) {
  const std::string text = "\n  Just a short note.  \n";
  auto chunks = ChunkText(text, CountWords);
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), 1u);
  EXPECT_EQ((*chunks)[0].text, "Just a short note.");
  EXPECT_EQ((*chunks)[0].start, 3u);
  EXPECT_EQ((*chunks)[0].token_count, 4);
  EXPECT_EQ((*chunks)[0].heading_context, "");
}

TEST(Chunker, BreaksAtParagraphs) {
  // Three 60-word paragraphs, target 100: each chunk is exactly one paragraph.
  std::vector<std::string> paragraphs = {Words(60, "a"), Words(60, "b"), Words(60, "c")};
  const std::string text = paragraphs[0] + "\n\n" + paragraphs[1] + "\n\n" + paragraphs[2] + "\n";
  const ChunkerOptions options{.target_tokens = 100, .overlap_tokens = 0};
  auto chunks = ChunkText(text, CountWords, options);
  ASSERT_TRUE(chunks.ok());
  CheckInvariants(text, *chunks, CountWords, options);
  ASSERT_EQ(chunks->size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*chunks)[i].text, paragraphs[i]);
}

TEST(Chunker, BreaksAtSentencesInsideLongParagraphs) {
  std::string text;
  for (int s = 0; s < 12; ++s) text += Words(9, "s" + std::to_string(s) + "w") + ". ";
  const ChunkerOptions options{.target_tokens = 25, .overlap_tokens = 0};
  auto chunks = ChunkText(text, CountWords, options);
  ASSERT_TRUE(chunks.ok());
  CheckInvariants(text, *chunks, CountWords, options);
  ASSERT_GT(chunks->size(), 4u);
  for (const TextChunk& c : *chunks) {
    EXPECT_EQ(c.text.back(), '.') << c.text;
    EXPECT_EQ(c.token_count, 18);  // two whole sentences fit, a third does not
  }
}

TEST(Chunker, BreaksAtWordsWithoutPunctuation) {
  const std::string text = Words(1000, "w");
  const ChunkerOptions options{.target_tokens = 200, .overlap_tokens = 30};
  auto chunks = ChunkText(text, CountWords, options);
  ASSERT_TRUE(chunks.ok());
  CheckInvariants(text, *chunks, CountWords, options);
  for (size_t i = 0; i + 1 < chunks->size(); ++i) {
    EXPECT_EQ((*chunks)[i].token_count, 200);
    // The next chunk repeats exactly the last 30 words.
    const TextChunk& a = (*chunks)[i];
    const TextChunk& b = (*chunks)[i + 1];
    ASSERT_LT(b.start, a.end);
    EXPECT_EQ(CountWords(std::string_view(text).substr(b.start, a.end - b.start)), 30);
  }
  EXPECT_EQ(chunks->size(), 6u);  // 200 + 5 * 170 >= 1000
}

TEST(Chunker, OverlapPrefersSentenceStarts) {
  std::string text;
  for (int s = 0; s < 30; ++s) text += Words(7, "s" + std::to_string(s) + "w") + ". ";
  const ChunkerOptions options{.target_tokens = 50, .overlap_tokens = 10};
  auto chunks = ChunkText(text, CountWords, options);
  ASSERT_TRUE(chunks.ok());
  CheckInvariants(text, *chunks, CountWords, options);
  for (size_t i = 1; i < chunks->size(); ++i) {
    const TextChunk& a = (*chunks)[i - 1];
    const TextChunk& b = (*chunks)[i];
    ASSERT_LT(b.start, a.end) << "no overlap at chunk " << i;
    const int overlap = CountWords(std::string_view(text).substr(b.start, a.end - b.start));
    EXPECT_GE(overlap, 5);
    EXPECT_LE(overlap, 10);
    EXPECT_EQ(text.substr(b.start - 2, 2), ". ") << "chunk " << i << " starts mid-sentence";
  }
}

// A settings table whose rows are longer than the overlap: each chunk
// starts at a row, so no chunk opens with the tail of another setting.
TEST(Chunker, TableRowsAreNotCutByTheOverlap) {
  std::string text = "| key | default | meaning |\n|---|---|---|\n";
  for (int r = 0; r < 20; ++r)
    text += "| `key" + std::to_string(r) + "` | " + std::to_string(r) + " | " + Words(12, "m") + " |\n";
  const ChunkerOptions options{.target_tokens = 60, .overlap_tokens = 10};
  auto chunks = ChunkText(text, CountWords, options);
  ASSERT_TRUE(chunks.ok());
  ASSERT_GT(chunks->size(), 3u);
  CheckInvariants(text, *chunks, CountWords, options);
  for (size_t i = 1; i < chunks->size(); ++i) {
    const TextChunk& c = (*chunks)[i];
    EXPECT_EQ(text[c.start - 1], '\n') << "chunk " << i << " starts mid-row: " << c.text.substr(0, 40);
    EXPECT_TRUE(c.text.starts_with("| `key")) << c.text.substr(0, 40);
  }
}

TEST(Chunker, CarriesMarkdownHeadings) {
  const std::string text = testing::ReadFixture("sample.md");
  const ChunkerOptions options{.target_tokens = 200, .overlap_tokens = 30};
  auto chunks = ChunkText(text, CountWords, options);
  ASSERT_TRUE(chunks.ok());
  CheckInvariants(text, *chunks, CountWords, options);
  ASSERT_EQ(chunks->size(), 5u);
  EXPECT_EQ((*chunks)[0].text, "Intro line before any heading.");
  EXPECT_EQ((*chunks)[0].heading_context, "");
  EXPECT_EQ((*chunks)[1].text, "# Garden Guide\n\nPlants need light, water and care.");
  EXPECT_EQ((*chunks)[1].heading_context, "Garden Guide");
  EXPECT_EQ((*chunks)[2].heading_context, "Garden Guide > Watering");
  EXPECT_EQ((*chunks)[3].heading_context, "Garden Guide > Watering > In Summer");
  EXPECT_NE((*chunks)[3].text.find("# not a heading inside a fence"), std::string::npos);
  EXPECT_EQ((*chunks)[4].heading_context, "Garden Guide > Soil");
  EXPECT_EQ((*chunks)[4].text, "## Soil\n\nLoamy soil drains well.");

  auto flat =
      ChunkText(text, CountWords, {.target_tokens = 200, .overlap_tokens = 30, .markdown_headings = false});
  ASSERT_EQ(flat->size(), 1u);
  EXPECT_EQ((*flat)[0].heading_context, "");
}

TEST(Chunker, HeadingWithoutBodyJoinsNextSection) {
  const std::string text = "# Book\n\n## Chapter 1\n\nFirst words.\n\n## Chapter 2 ##\nSecond words.";
  auto chunks = ChunkText(text, CountWords);
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), 2u);
  EXPECT_EQ((*chunks)[0].text, "# Book\n\n## Chapter 1\n\nFirst words.");
  EXPECT_EQ((*chunks)[0].heading_context, "Book > Chapter 1");
  EXPECT_EQ((*chunks)[1].heading_context, "Book > Chapter 2");
}

TEST(Chunker, NoOverlapAcrossHeadings) {
  const std::string text = "# A\n\n" + Words(150, "a") + "\n\n# B\n\n" + Words(150, "b");
  const ChunkerOptions options{.target_tokens = 100, .overlap_tokens = 20};
  auto chunks = ChunkText(text, CountWords, options);
  ASSERT_TRUE(chunks.ok());
  CheckInvariants(text, *chunks, CountWords, options);
  for (size_t i = 1; i < chunks->size(); ++i) {
    if ((*chunks)[i].heading_context != (*chunks)[i - 1].heading_context) {
      EXPECT_GE((*chunks)[i].start, (*chunks)[i - 1].end);
      EXPECT_EQ((*chunks)[i].text.substr(0, 3), "# B");
    }
  }
}

TEST(Chunker, SplitsOverlongWordsAtCharacterBoundaries) {
  std::string word;
  for (int i = 0; i < 150; ++i) word += "é日a";
  const std::string text = "start " + word + " end";
  const ChunkerOptions options{.target_tokens = 100, .overlap_tokens = 10};
  auto chunks = ChunkText(text, CountChars, options);
  ASSERT_TRUE(chunks.ok());
  CheckInvariants(text, *chunks, CountChars, options);
  EXPECT_GE(chunks->size(), 5u);
}

// A word of n bytes without a space (CJK text, minified code) must cost token
// counts over O(n log n) bytes, not n^2: the counter tallies what it reads and,
// once over the budget, stops reading (answering 1) so a regression fails fast.
class UnbrokenWordCost : public ::testing::TestWithParam<std::string> {};

TEST_P(UnbrokenWordCost, CountsAreLinearInTheWordLength) {
  for (const int repeats : {20000, 80000}) {
    std::string text = "intro ";
    for (int i = 0; i < repeats; ++i) text += GetParam();
    text += " outro";
    const size_t budget = 64 * text.size();
    size_t read = 0;
    TokenCounter count = [&](std::string_view s) {
      if (read > budget) return 1;
      read += s.size();
      return CountChars(s);
    };
    const ChunkerOptions options{.target_tokens = 16, .overlap_tokens = 2};
    auto chunks = ChunkText(text, count, options);
    ASSERT_TRUE(chunks.ok());
    EXPECT_LE(read, budget) << repeats << " repeats: the counter read " << read << " bytes for a text of "
                            << text.size();
    if (read <= budget) CheckInvariants(text, *chunks, CountChars, options);
  }
}

INSTANTIATE_TEST_SUITE_P(Texts, UnbrokenWordCost,
                         ::testing::Values("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",  // 日本語
                                           "a=b(c);d.e[f]+", "\xC3\xA9t\xC3\xA9"),
                         [](const auto& info) { return std::to_string(info.index); });

TEST(Chunker, RandomTextsKeepTheContract) {
  std::mt19937 rng(1234);
  const std::vector<std::string> pieces = {"word",        "Longer",  "x",    "naïve", "日本",
                                           "end.",        "stop!",   "why?", "\n",    "\n\n",
                                           "\n## Head\n", "\n```\n", "  ",   "\t",    "supercalifragilistic"};
  for (int round = 0; round < 40; ++round) {
    std::string text;
    const int n = 50 + static_cast<int>(rng() % 800);
    for (int i = 0; i < n; ++i) {
      text += pieces[rng() % pieces.size()];
      text += ' ';
    }
    const int target = 5 + static_cast<int>(rng() % 120);
    const ChunkerOptions options{.target_tokens = target, .overlap_tokens = static_cast<int>(rng() % target)};
    for (const TokenCounter& count : {TokenCounter(CountWords), TokenCounter(CountChars)}) {
      auto chunks = ChunkText(text, count, options);
      ASSERT_TRUE(chunks.ok());
      CheckInvariants(text, *chunks, count, options);
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace ragd::corpus
