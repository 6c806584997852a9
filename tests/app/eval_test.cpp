// The pure scoring functions behind `ragd eval`.
#include "app/eval/eval.h"

#include <gtest/gtest.h>

namespace ragd::app {
namespace {

TEST(EvalParse, ReadsQuestionsAndSkipsBlankAndCommentLines) {
  auto qs = ParseLabelledQuestions(
      "# comment\n"
      "{\"question\": \"Which port?\", \"documents\": [\"configuration.md\"], \"key_phrases\": [\"9090\", "
      "\"PORT\"]}\n"
      "\n"
      "{\"question\": \"No labels?\"}\r\n");
  ASSERT_TRUE(qs.ok()) << qs.status().ToString();
  ASSERT_EQ(qs->size(), 2u);
  EXPECT_EQ((*qs)[0].question, "Which port?");
  EXPECT_EQ((*qs)[0].documents, std::vector<std::string>{"configuration.md"});
  EXPECT_EQ((*qs)[0].key_phrases, (std::vector<std::string>{"9090", "PORT"}));
  EXPECT_TRUE((*qs)[1].documents.empty());
  EXPECT_TRUE((*qs)[1].key_phrases.empty());
}

TEST(EvalParse, RejectsBadLinesNamingTheLine) {
  auto bad_json = ParseLabelledQuestions("{\"question\": \"a\"}\n{not json\n");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_EQ(bad_json.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_json.status().message().find("line 2"), std::string::npos) << bad_json.status().message();
  EXPECT_FALSE(ParseLabelledQuestions("{\"question\": \"\"}").ok());
  EXPECT_FALSE(ParseLabelledQuestions("{\"documents\": [\"a.md\"]}").ok());
  EXPECT_FALSE(ParseLabelledQuestions("{\"question\": \"q\", \"documents\": \"a.md\"}").ok());
  EXPECT_FALSE(ParseLabelledQuestions("{\"question\": \"q\", \"key_phrases\": [1]}").ok());
  EXPECT_FALSE(ParseLabelledQuestions("[\"question\"]").ok());
}

TEST(EvalRetrieval, MatchesFileNameOrTitleCaseInsensitively) {
  const HitDocument doc{"/srv/docs/sample/Configuration.md", "Configuring ragd"};
  EXPECT_TRUE(MatchesLabel(doc, "configuration.md"));
  EXPECT_TRUE(MatchesLabel(doc, "configuring RAGD"));
  EXPECT_FALSE(MatchesLabel(doc, "sample/configuration.md"));
  EXPECT_FALSE(MatchesLabel(doc, "configuration"));
  EXPECT_FALSE(MatchesLabel(doc, ""));
  EXPECT_TRUE(MatchesLabel({"documents.md", ""}, "documents.md"));
}

TEST(EvalRetrieval, FirstRelevantRankAndReciprocalRank) {
  const std::vector<HitDocument> hits = {{"a.md", "A"}, {"b.md", "B"}, {"a.md", "A"}, {"c.md", "C"}};
  EXPECT_EQ(FirstRelevantRank(hits, {"a.md"}), 1);
  EXPECT_EQ(FirstRelevantRank(hits, {"c.md", "b.md"}), 2);
  EXPECT_EQ(FirstRelevantRank(hits, {"C"}), 4);
  EXPECT_EQ(FirstRelevantRank(hits, {"d.md"}), 0);
  EXPECT_EQ(FirstRelevantRank(hits, {}), 0);
  EXPECT_EQ(FirstRelevantRank({}, {"a.md"}), 0);
  EXPECT_DOUBLE_EQ(ReciprocalRank(1), 1.0);
  EXPECT_DOUBLE_EQ(ReciprocalRank(4), 0.25);
  EXPECT_DOUBLE_EQ(ReciprocalRank(0), 0.0);
}

TEST(EvalCitations, CountsValidAndDanglingMarkers) {
  CitationMarkers m = CountCitationMarkers("Set RAGD_SERVER_PORT [1]. See also [2, 7] and [0].", 5);
  EXPECT_EQ(m.total, 4);
  EXPECT_EQ(m.valid, 2);
  EXPECT_EQ(m.cited, (std::set<int>{1, 2}));
  ASSERT_TRUE(CitationValidity(m).has_value());
  EXPECT_DOUBLE_EQ(*CitationValidity(m), 0.5);

  m = CountCitationMarkers("Twice [3] and [3]; not markers: [a], [1.5, [ ], [12", 3);
  EXPECT_EQ(m.total, 2);
  EXPECT_EQ(m.valid, 2);
  EXPECT_EQ(m.cited, std::set<int>{3});
  EXPECT_DOUBLE_EQ(*CitationValidity(m), 1.0);

  m = CountCitationMarkers("No citation at all.", 5);
  EXPECT_EQ(m.total, 0);
  EXPECT_FALSE(CitationValidity(m).has_value());

  m = CountCitationMarkers("Only [6].", 5);
  EXPECT_EQ(m.total, 1);
  EXPECT_DOUBLE_EQ(*CitationValidity(m), 0.0);
}

TEST(EvalCitations, ContentWordsAreLongLowerCaseAndSkipFunctionWords) {
  EXPECT_EQ(ContentWords("The Port is SET with RAGD_SERVER_PORT, from 9090 [1]"),
            (std::set<std::string>{"port", "ragd", "server", "9090"}));
  EXPECT_TRUE(ContentWords("a an the and [1] [2]").empty());
}

TEST(EvalCitations, PassageSupportsByKeyPhraseOrTwoSharedWords) {
  const std::string passage = "Set the environment variable RAGD_SERVER_PORT to change the listening port.";
  // Key phrase found in the passage, case-insensitively.
  EXPECT_TRUE(PassageSupports(passage, "Unrelated.", {"ragd_server_port"}));
  // Two shared content words ("environment", "variable").
  EXPECT_TRUE(PassageSupports(passage, "Use an environment variable [1].", {}));
  // Only one shared content word.
  EXPECT_FALSE(PassageSupports(passage, "The environment matters [1].", {}));
  // Shared short and function words do not count.
  EXPECT_FALSE(PassageSupports(passage, "Set the to with that [1].", {"9090"}));
}

TEST(EvalAnswers, KeyPhraseCoverageIsCaseInsensitiveShare) {
  const std::string answer = "Set ragd_server_port=9090 in the environment.";
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage(answer, {"RAGD_SERVER_PORT", "9090"}), 1.0);
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage(answer, {"RAGD_SERVER_PORT", "--port", "x", "9090"}), 0.5);
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage(answer, {"make run"}), 0.0);
  EXPECT_FALSE(KeyPhraseCoverage(answer, {}).has_value());
}

TEST(EvalAnswers, DetectsNotInSourcesAnswers) {
  EXPECT_TRUE(SaysNotInSources("The documents do not say."));
  EXPECT_TRUE(SaysNotInSources("The manual DOES NOT SAY that."));
  EXPECT_TRUE(SaysNotInSources("That is not in the sources."));
  EXPECT_TRUE(SaysNotInSources("I don't know."));
  EXPECT_FALSE(SaysNotInSources("Set RAGD_SERVER_PORT to 9090 [1]."));
}

TEST(EvalTotals, PercentileIsNearestRank) {
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(Percentile({7}, 95), 7);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 50), 2);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 95), 4);
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(Percentile(v, 95), 19);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 10);
}

TEST(EvalTotals, SummarizesRecallMrrAndAnswerMetrics) {
  std::vector<QuestionResult> rs(4);
  rs[0].first_relevant_rank = 1;
  rs[1].first_relevant_rank = 2;
  rs[2].first_relevant_rank = 0;
  rs[3].first_relevant_rank = 4;
  rs[0].citation_validity = 1.0;
  rs[1].citation_validity = 0.5;  // rs[2], rs[3]: no markers, not counted
  rs[0].citation_support = 1.0;
  rs[1].citation_support = 0.0;
  rs[0].key_phrase_coverage = 0.5;
  rs[2].key_phrase_coverage = 0.0;
  rs[3].not_in_sources = true;
  for (int i = 0; i < 4; ++i) {
    rs[i].prompt_tokens = 100;
    rs[i].completion_tokens = 10 + i;
    rs[i].retrieval_ms = 10.0 * (i + 1);
    rs[i].answer_ms = 100.0 * (4 - i);
  }
  const EvalTotals t = Summarize(rs);
  EXPECT_EQ(t.questions, 4);
  EXPECT_DOUBLE_EQ(t.recall, 0.75);
  EXPECT_DOUBLE_EQ(t.mrr, (1.0 + 0.5 + 0.0 + 0.25) / 4);
  EXPECT_EQ(t.answers_with_markers, 2);
  EXPECT_DOUBLE_EQ(*t.citation_validity, 0.75);
  EXPECT_EQ(t.answers_citing, 2);
  EXPECT_DOUBLE_EQ(*t.citation_support, 0.5);
  EXPECT_DOUBLE_EQ(*t.key_phrase_coverage, 0.25);
  EXPECT_EQ(t.not_in_sources, 1);
  EXPECT_EQ(t.prompt_tokens, 400);
  EXPECT_EQ(t.completion_tokens, 46);
  EXPECT_DOUBLE_EQ(t.retrieval_p50_ms, 20);
  EXPECT_DOUBLE_EQ(t.retrieval_p95_ms, 40);
  EXPECT_DOUBLE_EQ(t.answer_p50_ms, 200);
  EXPECT_DOUBLE_EQ(t.answer_p95_ms, 400);
}

TEST(EvalTotals, ThresholdFailuresNameEachMetricUnderItsMinimum) {
  EvalTotals t;
  t.recall = 0.95;
  t.mrr = 0.8;
  t.citation_validity = 0.6;
  EXPECT_TRUE(ThresholdFailures(t, {}).empty());

  t.recall = 0.85;
  auto f = ThresholdFailures(t, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].find("recall"), std::string::npos);

  t.mrr = 0.4;
  t.citation_validity = 0.2;
  EXPECT_EQ(ThresholdFailures(t, {}).size(), 3u);
  EXPECT_TRUE(
      ThresholdFailures(t, {.min_recall = 0.8, .min_mrr = 0.4, .min_citation_validity = 0.2}).empty());

  // No answer with a marker: validity is undefined, which fails unless the minimum is 0.
  t = EvalTotals{};
  t.recall = 1;
  t.mrr = 1;
  f = ThresholdFailures(t, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].find("citation validity"), std::string::npos);
  EXPECT_TRUE(ThresholdFailures(t, {.min_citation_validity = 0}).empty());
}

}  // namespace
}  // namespace ragd::app
