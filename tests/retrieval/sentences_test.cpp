// Sentence splitting of answers, whole and streamed, over the cases in
// tests/data/attribution/sentence_cases.jsonl ({"lang", "name", "text",
// "sentences": [...]}), and citation marker parsing.
#include "retrieval/sentences.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "tests/retrieval/support_pairs.h"

namespace ragd::retrieval {
namespace {

struct SplitCase {
  std::string lang;
  std::string name;
  std::string text;
  std::vector<std::string> sentences;
};

void PrintTo(const SplitCase& c, std::ostream* os) { *os << c.lang << ": " << c.name; }

std::vector<SplitCase> LoadSplitCases() {
  auto lines = testing::ReadJsonLines("attribution/sentence_cases.jsonl");
  if (!lines.ok()) return {{"missing", lines.status().ToString(), "", {}}};
  std::vector<SplitCase> out;
  for (const auto& j : *lines) {
    out.push_back(
        {j.at("lang"), j.at("name"), j.at("text"), j.at("sentences").get<std::vector<std::string>>()});
  }
  return out;
}

// Feeds `text` in pieces of `step` bytes the way a streamed answer arrives,
// taking each sentence as soon as FindSentenceBreak decides it.
std::vector<std::string> SplitStreamed(const std::string& text, size_t step) {
  std::vector<std::string> out;
  std::string pending;
  auto drain = [&](bool at_end) {
    while (true) {
      size_t ws = 0;
      while (ws < pending.size() && std::isspace(static_cast<unsigned char>(pending[ws]))) ++ws;
      pending.erase(0, ws);
      if (pending.empty()) return;
      std::optional<SentenceBreak> b = FindSentenceBreak(pending, at_end);
      if (!b) return;
      if (b->end > 0) out.push_back(pending.substr(0, b->end));
      pending.erase(0, std::max<size_t>(b->next, 1));
    }
  };
  for (size_t pos = 0; pos < text.size(); pos += step) {
    pending += text.substr(pos, step);
    drain(false);
  }
  drain(true);
  return out;
}

class SplitTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(SplitTest, WholeText) {
  const SplitCase& c = GetParam();
  ASSERT_NE(c.lang, "missing") << c.name;
  std::vector<std::string> got;
  for (std::string_view s : SplitSentences(c.text)) got.emplace_back(s);
  EXPECT_EQ(got, c.sentences) << c.lang << ": " << c.name;
}

TEST_P(SplitTest, StreamedByteByByteAndInPieces) {
  const SplitCase& c = GetParam();
  ASSERT_NE(c.lang, "missing") << c.name;
  for (size_t step : {1, 2, 3, 7})
    EXPECT_EQ(SplitStreamed(c.text, step), c.sentences) << c.name << ", step " << step;
}

INSTANTIATE_TEST_SUITE_P(Cases, SplitTest, ::testing::ValuesIn(LoadSplitCases()),
                         [](const ::testing::TestParamInfo<SplitCase>& info) {
                           return info.param.lang + "_" + std::to_string(info.index);
                         });

TEST(SentenceBreakTest, UndecidedWhileTheTextMayContinue) {
  EXPECT_FALSE(FindSentenceBreak("It is 3.", false));       // may become 3.14
  EXPECT_FALSE(FindSentenceBreak("It is 8080. ", false));   // a marker may follow
  EXPECT_FALSE(FindSentenceBreak("It is 8080. [", false));  // inside a marker
  EXPECT_FALSE(FindSentenceBreak("It is 8080. [1", false));
  EXPECT_FALSE(FindSentenceBreak("e.g. ", false));
  EXPECT_FALSE(FindSentenceBreak("首都\xE3\x80", false));  // half of 。
  auto b = FindSentenceBreak("It is 8080. [1] Next", false);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->end, 15u);
  EXPECT_EQ(b->next, 16u);
  b = FindSentenceBreak("It is 8080.", true);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->end, 11u);
}

TEST(CitationMarkerTest, FindsNumbersAndSkipsOtherBrackets) {
  const auto markers = FindCitationMarkers("a [1] b [2, 3] c [x] [] [4,5] d [12] [99999999]");
  ASSERT_EQ(markers.size(), 5u);
  EXPECT_EQ(markers[0].numbers, std::vector<int>({1}));
  EXPECT_EQ(markers[0].begin, 2u);
  EXPECT_EQ(markers[0].end, 5u);
  EXPECT_EQ(markers[1].numbers, std::vector<int>({2, 3}));
  EXPECT_EQ(markers[2].numbers, std::vector<int>({4, 5}));
  EXPECT_EQ(markers[3].numbers, std::vector<int>({12}));
  EXPECT_EQ(markers[4].numbers, std::vector<int>({10000}));  // capped, still out of range
}

TEST(CitationMarkerTest, MarkerLengthAtTheEndOfAStream) {
  EXPECT_FALSE(MarkerLengthAt("[", false));
  EXPECT_FALSE(MarkerLengthAt("[1, ", false));
  EXPECT_EQ(MarkerLengthAt("[", true), 0u);
  EXPECT_EQ(MarkerLengthAt("[1]", false), 3u);
  EXPECT_EQ(MarkerLengthAt("[a]", false), 0u);
  EXPECT_EQ(MarkerLengthAt("x", false), 0u);
}

}  // namespace
}  // namespace ragd::retrieval
