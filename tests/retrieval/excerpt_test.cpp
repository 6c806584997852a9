#include "retrieval/excerpt.h"

#include <gtest/gtest.h>

#include <string>

namespace ragd::retrieval {
namespace {

constexpr const char* kPorts =
    "ragd listens on one port for the chat page\n"
    "and the API. The default port is 8080; set\n"
    "RAGD_SERVER_PORT to change it. Metrics are served\n"
    "on the same port under /metrics.\n"
    "\n"
    "A second paragraph says nothing about the question at all, and it is\n"
    "long enough that the passage does not fit in a short excerpt.";

TEST(QueryExcerptTest, PassageThatFitsIsReturnedWhole) {
  EXPECT_EQ(QueryExcerpt("The default port is 8080.", "default port", 100), "The default port is 8080.");
}

TEST(QueryExcerptTest, KeepsTheSentenceOfAWrappedParagraphThatAnswers) {
  EXPECT_EQ(QueryExcerpt(kPorts, "How do I change the port with RAGD_SERVER_PORT?", 90),
            "…\nThe default port is 8080; set RAGD_SERVER_PORT to change it.\n…");
}

TEST(QueryExcerptTest, KeepsSeveralUnitsInPassageOrder) {
  const std::string out = QueryExcerpt(kPorts, "port metrics chat", 200);
  EXPECT_EQ(out,
            "ragd listens on one port for the chat page and the API. The default port is 8080; set "
            "RAGD_SERVER_PORT to change it. Metrics are served on the same port under /metrics.\n…");
}

TEST(QueryExcerptTest, TableRowsAndListItemsAreUnitsOfTheirOwn) {
  const std::string table =
      "| format | file endings |\n"
      "|---|---|\n"
      "| plain text | `.txt` |\n"
      "| Markdown | `.md` |\n"
      "| PDF | `.pdf` |\n"
      "| EPUB | `.epub` |\n"
      "- a list item about the weather\n"
      "  that wraps onto a second line\n"
      "- another item about PDF pages";
  EXPECT_EQ(QueryExcerpt(table, "Can I upload a PDF?", 60),
            "…\n| PDF | `.pdf` |\n…\n- another item about PDF pages");
}

TEST(QueryExcerptTest, ACodeBlockIsKeptWholeWithItsFences) {
  const std::string passage =
      "Start the server with the sample documents:\n"
      "\n"
      "```sh\n"
      "ragd serve --ingest-if-empty docs/sample\n"
      "```\n"
      "\n"
      "Other text about accounts and quotas that the question does not need at all.";
  const std::string out = QueryExcerpt(passage, "which command serves the sample documents", 110);
  EXPECT_NE(out.find("```sh\nragd serve --ingest-if-empty docs/sample\n```"), std::string::npos) << out;
  EXPECT_EQ(out.find("quotas"), std::string::npos) << out;
}

TEST(QueryExcerptTest, NumbersMatchOnlyExactly) {
  const std::string passage =
      "The limit is 60 requests per minute.\n\nThe limit is 50000 tokens per minute, enforced per user.";
  EXPECT_EQ(QueryExcerpt(passage, "is it 50,000 tokens?", 60),
            "…\nThe limit is 50000 tokens per minute, enforced per user.");
}

TEST(QueryExcerptTest, APassageSharingNothingKeepsItsOpening) {
  EXPECT_EQ(QueryExcerpt(kPorts, "Wie hoch ist der Mount Everest?", 60),
            "ragd listens on one port for the chat page and the API.\n…");
}

TEST(QueryExcerptTest, StaysWithinTheBudgetButAlwaysKeepsTheBestUnit) {
  const std::string out = QueryExcerpt(kPorts, "RAGD_SERVER_PORT", 10);
  EXPECT_EQ(out, "…\nThe default port is 8080; set RAGD_SERVER_PORT to change it.\n…");
  for (size_t budget : {40u, 80u, 120u, 160u}) {
    const std::string text = QueryExcerpt(kPorts, "port metrics API chat second paragraph", budget);
    // "…" lines are the only additions beyond the budget.
    std::string kept;
    for (size_t at = 0; at < text.size();) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      if (text.substr(at, nl - at) != "…") kept += text.substr(at, nl - at + 1);
      at = nl + 1;
    }
    EXPECT_LE(kept.size(), std::max<size_t>(budget, 62)) << budget << ": " << text;
  }
}

}  // namespace
}  // namespace ragd::retrieval
