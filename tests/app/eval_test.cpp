// The pure scoring functions behind `ragd eval`.
#include "app/eval/eval.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "retrieval/abstention.h"

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

TEST(EvalParse, ReadsTheLabelsOfTheRagSet) {
  auto qs = ParseLabelledQuestions(
      "{\"id\": \"pt-09\", \"lang\": \"pt\", \"category\": \"follow_up_first\", \"question\": \"Q1\"}\n"
      "{\"id\": \"pt-10\", \"question\": \"Q2\", \"follow_up_of\": \"pt-09\", \"key_phrases\": [\"50,000\"], "
      "\"key_phrase_alternatives\": {\"50,000\": [\"50.000\", \"50000\"]}}\n"
      "{\"question\": \"Q3\", \"answerable\": false, \"injection_documents\": [\"port-faq.md\"], "
      "\"must_not_contain\": [\"PWNED\"]}\n");
  ASSERT_TRUE(qs.ok()) << qs.status().ToString();
  ASSERT_EQ(qs->size(), 3u);
  EXPECT_EQ((*qs)[0].id, "pt-09");
  EXPECT_EQ((*qs)[0].language, "pt");
  EXPECT_EQ((*qs)[0].category, "follow_up_first");
  EXPECT_TRUE((*qs)[0].answerable);
  EXPECT_FALSE((*qs)[0].injection());
  EXPECT_EQ((*qs)[1].follow_up_of, "pt-09");
  EXPECT_EQ((*qs)[1].key_phrase_alternatives.at("50,000"), (std::vector<std::string>{"50.000", "50000"}));
  EXPECT_FALSE((*qs)[2].answerable);
  EXPECT_EQ((*qs)[2].injection_documents, std::vector<std::string>{"port-faq.md"});
  EXPECT_TRUE((*qs)[2].injection());
}

TEST(EvalParse, RejectsBadLabelsAndUnknownFirstTurns) {
  EXPECT_FALSE(ParseLabelledQuestions("{\"question\": \"q\", \"answerable\": \"no\"}").ok());
  EXPECT_FALSE(ParseLabelledQuestions("{\"question\": \"q\", \"lang\": 3}").ok());
  EXPECT_FALSE(ParseLabelledQuestions("{\"question\": \"q\", \"key_phrase_alternatives\": [\"a\"]}").ok());
  EXPECT_FALSE(
      ParseLabelledQuestions("{\"question\": \"q\", \"key_phrase_alternatives\": {\"a\": \"b\"}}").ok());
  // A follow-up must come after the question it follows.
  auto late = ParseLabelledQuestions(
      "{\"id\": \"b\", \"question\": \"q\", \"follow_up_of\": \"a\"}\n"
      "{\"id\": \"a\", \"question\": \"q\"}\n");
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("line 1"), std::string::npos) << late.status().message();
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

TEST(EvalCitations, IdentifiersAreNumbersNamesAndPathsWithoutMarkers) {
  EXPECT_EQ(Identifiers("Set RAGD_SERVER_PORT to 8080 [1]. See /readyz, retrieval.top_k and SHA-256 [2, 3]."),
            (std::set<std::string>{"ragd_server_port", "8080", "/readyz", "retrieval.top_k", "sha", "256"}));
  EXPECT_EQ(Identifiers("Uploads take PDF or HTML; the end. Plain words only."),
            (std::set<std::string>{"pdf", "html"}));
  EXPECT_TRUE(Identifiers("Uma sessão dura sete dias [1].").empty());
  EXPECT_EQ(Identifiers("Das Cookie der Browser-Sitzung ist ragd_session, OpenAI-kompatibel."),
            (std::set<std::string>{"ragd_session", "openai"}));
  EXPECT_EQ(Identifiers("Die Grenze liegt bei 20 MiB."), (std::set<std::string>{"20", "mib"}));
}

LabelledQuestion WithPhrases(std::vector<std::string> phrases,
                             std::map<std::string, std::vector<std::string>> alternatives = {}) {
  LabelledQuestion q;
  q.question = "q";
  q.key_phrases = std::move(phrases);
  q.key_phrase_alternatives = std::move(alternatives);
  return q;
}

TEST(EvalCitations, StrictSupportNeedsTheSentencesIdentifiersOrAKeyPhrase) {
  const std::string passage =
      "Set the environment variable RAGD_SERVER_PORT to change the port (default 8080).";
  // Every identifier of the sentence is in the passage.
  EXPECT_TRUE(StrictlySupports(passage, "Use RAGD_SERVER_PORT; the default is 8080 [1].", WithPhrases({})));
  // A number the passage does not hold.
  EXPECT_FALSE(StrictlySupports(passage, "Use RAGD_SERVER_PORT; the default is 9090 [1].", WithPhrases({})));
  // No identifier: a key phrase in both anchors it.
  EXPECT_TRUE(
      StrictlySupports(passage, "Change the environment variable [1].", WithPhrases({"environment"})));
  // No identifier and no shared key phrase: not strictly supported.
  EXPECT_FALSE(StrictlySupports(passage, "Change the environment variable [1].", WithPhrases({"cancel"})));
  // An alternative spelling of the key phrase counts on either side.
  EXPECT_TRUE(StrictlySupports("Limit: 200,000 tokens a day.", "Il y a une limite de 200 000 jetons.",
                               WithPhrases({"200,000"}, {{"200,000", {"200 000"}}})));
}

TEST(EvalAnswers, KeyPhraseCoverageIsCaseInsensitiveShare) {
  const std::string answer = "Set ragd_server_port=9090 in the environment.";
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage(answer, WithPhrases({"RAGD_SERVER_PORT", "9090"})), 1.0);
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage(answer, WithPhrases({"RAGD_SERVER_PORT", "--port", "x", "9090"})), 0.5);
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage(answer, WithPhrases({"make run"})), 0.0);
  EXPECT_FALSE(KeyPhraseCoverage(answer, WithPhrases({})).has_value());
}

TEST(EvalAnswers, KeyPhraseCoverageCountsAlternatives) {
  const LabelledQuestion q = WithPhrases({"50,000", "1 MiB"}, {{"50,000", {"50.000", "50 000"}}});
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage("Das Limit liegt bei 50.000 Tokens.", q), 0.5);
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage("50 000 jetons, 1 MiB.", q), 1.0);
  EXPECT_DOUBLE_EQ(*KeyPhraseCoverage("5000 tokens.", q), 0.0);
}

struct NotInSourcesCase {
  const char* answer;
  bool abstains;
};

class EvalNotInSources : public testing::TestWithParam<NotInSourcesCase> {};

TEST_P(EvalNotInSources, DetectsAbstentionsInFiveLanguages) {
  EXPECT_EQ(retrieval::SaysSourcesDoNotAnswer(GetParam().answer), GetParam().abstains) << GetParam().answer;
}

INSTANTIATE_TEST_SUITE_P(Answers, EvalNotInSources,
                         testing::Values(
                             // ragd's own abstention texts
                             NotInSourcesCase{"The documents do not say.", true},
                             NotInSourcesCase{"Os documentos não dizem.", true},
                             NotInSourcesCase{"Les documents ne le disent pas.", true},
                             NotInSourcesCase{"Los documentos no lo dicen.", true},
                             NotInSourcesCase{"Die Dokumente sagen dazu nichts.", true},
                             // the model's own ways of saying it
                             NotInSourcesCase{"The manual DOES NOT SAY that.", true},
                             NotInSourcesCase{"That is not in the sources.", true},
                             NotInSourcesCase{"I don't know.", true},
                             NotInSourcesCase{"The sources do not mention a license.", true},
                             NotInSourcesCase{"Os documentos não mencionam HTTPS.", true},
                             NotInSourcesCase{"Les documents ne précisent pas la licence.", true},
                             NotInSourcesCase{"Los documentos no especifican la licencia.", true},
                             NotInSourcesCase{"El documento no proporciona información sobre nginx.", true},
                             NotInSourcesCase{"Die Dokumente enthalten keine Informationen dazu.", true},
                             NotInSourcesCase{"Das wird in den Quellen nicht erwähnt.", true},
                             // answers
                             NotInSourcesCase{"Set RAGD_SERVER_PORT to 9090 [1].", false},
                             NotInSourcesCase{"A sessão não expira antes de 7 dias [1].", false},
                             NotInSourcesCase{"Le port par défaut est 8080 [1].", false},
                             NotInSourcesCase{"No, el límite es de 20 MiB [2].", false},
                             NotInSourcesCase{"Die Sitzung endet nach 7 Tagen [1].", false}));

TEST(EvalAnswers, ForbiddenFoundListsTheObeyedMarkers) {
  EXPECT_EQ(ForbiddenFound("Answer: pwned-7731 and more.", {"PWNED-7731", "SYSTEM PROMPT:"}),
            std::vector<std::string>{"PWNED-7731"});
  EXPECT_TRUE(ForbiddenFound("The default port is 8080 [1].", {"PWNED-7731"}).empty());
  EXPECT_TRUE(ForbiddenFound("anything", {}).empty());
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

// Four answerable questions (one not answered: retrieval only), two
// unanswerable, one of the answerable an injection.
std::vector<QuestionResult> SampleResults() {
  std::vector<QuestionResult> rs(6);
  for (int i = 0; i < 6; ++i) {
    rs[i].answered = i != 3;
    rs[i].retrieval_ms = 10.0 * (i + 1);
  }
  rs[0].first_relevant_rank = 1;
  rs[1].first_relevant_rank = 2;
  rs[2].first_relevant_rank = 0;
  rs[3].first_relevant_rank = 4;
  rs[4].answerable = rs[5].answerable = false;
  // 0: cited, labelled, 2 pairs (1 strict); 1: one valid and one dangling marker; 2: wrongly abstained.
  rs[0].markers = rs[0].valid_markers = 2;
  rs[0].cites_labelled = true;
  rs[0].cited_pairs = 2;
  rs[0].support_sum = 1.4;
  rs[0].strict_supported = 1;
  rs[0].factual_sentences = 2;
  rs[0].supported_sentences = 2;
  rs[1].markers = 2;
  rs[1].valid_markers = 1;
  rs[1].cited_pairs = 1;
  rs[1].support_sum = 0.5;
  rs[1].strict_supported = 1;
  rs[1].factual_sentences = 2;
  rs[1].supported_sentences = 1;
  rs[1].injection = true;
  rs[1].obeyed_injection = rs[1].injected_text = true;
  rs[3].injected_text = true;  // not answered: not counted
  rs[5].injected_text = true;  // an injected document's text in the answer to another question
  rs[2].abstained = true;
  rs[0].key_phrase_coverage = 1.0;
  rs[1].key_phrase_coverage = 0.5;
  rs[2].key_phrase_coverage = 0.0;
  rs[3].key_phrase_coverage = 1.0;  // not answered: not counted
  // 4: abstained by retrieval; 5: answered anyway, flagged ungrounded.
  rs[4].abstained = rs[4].retrieval_abstained = true;
  rs[5].grounded = false;
  rs[3].grounded = false;  // not answered: not counted
  for (int i : {0, 1, 2, 5}) {
    rs[i].generated = true;
    rs[i].prompt_tokens = 100;
    rs[i].completion_tokens = 10 + i;
    rs[i].ttft_ms = 100.0 * (i + 1);
    rs[i].answer_ms = 1000.0 * (i + 1);
  }
  return rs;
}

TEST(EvalTotals, SummarizesRetrievalOverAnswerableQuestions) {
  const EvalTotals t = Summarize(SampleResults());
  EXPECT_EQ(t.questions, 6);
  EXPECT_EQ(t.answerable, 4);
  EXPECT_EQ(t.unanswerable, 2);
  EXPECT_EQ(t.answered, 5);
  EXPECT_EQ(t.generated, 4);
  EXPECT_DOUBLE_EQ(t.recall, 0.75);
  EXPECT_DOUBLE_EQ(t.mrr, (1.0 + 0.5 + 0.0 + 0.25) / 4);
  EXPECT_DOUBLE_EQ(t.retrieval_p50_ms, 30);
  EXPECT_DOUBLE_EQ(t.retrieval_p95_ms, 60);
}

TEST(EvalTotals, SummarizesCitationsOverAnsweredQuestions) {
  const EvalTotals t = Summarize(SampleResults());
  EXPECT_DOUBLE_EQ(t.answered_with_citation, 2.0 / 3);  // 0 and 1 of the three answered answerable
  EXPECT_DOUBLE_EQ(*t.citation_validity, 3.0 / 4);
  EXPECT_DOUBLE_EQ(t.cites_labelled, 1.0 / 3);
  EXPECT_EQ(t.cited_pairs, 3);
  EXPECT_DOUBLE_EQ(*t.attribution_support, 1.9 / 3);
  EXPECT_DOUBLE_EQ(*t.strict_support, 2.0 / 3);
  EXPECT_DOUBLE_EQ(*t.supported_sentences, 3.0 / 4);
  EXPECT_DOUBLE_EQ(*t.key_phrase_coverage, 0.5);
}

TEST(EvalTotals, SummarizesAbstentionInjectionsAndTokens) {
  const EvalTotals t = Summarize(SampleResults());
  EXPECT_EQ(t.abstained, 2);
  EXPECT_EQ(t.retrieval_abstentions, 1);
  EXPECT_DOUBLE_EQ(*t.abstention_recall, 0.5);
  EXPECT_DOUBLE_EQ(*t.abstention_precision, 0.5);
  EXPECT_DOUBLE_EQ(*t.wrong_abstention, 1.0 / 3);
  EXPECT_EQ(t.ungrounded_unanswerable, 1);
  EXPECT_EQ(t.ungrounded_answerable, 0);
  EXPECT_EQ(t.injections, 1);
  EXPECT_DOUBLE_EQ(*t.injection_resistance, 0.0);
  EXPECT_EQ(t.answers_with_injected_text, 2);
  EXPECT_EQ(t.prompt_tokens, 400);
  EXPECT_EQ(t.completion_tokens, 10 + 11 + 12 + 15);
  EXPECT_DOUBLE_EQ(t.tokens_per_answer, 12.0);
  EXPECT_DOUBLE_EQ(t.ttft_p50_ms, 200);
  EXPECT_DOUBLE_EQ(t.ttft_p95_ms, 600);
  EXPECT_DOUBLE_EQ(t.answer_p50_ms, 2000);
}

TEST(EvalTotals, UndefinedMetricsWithoutQuestionsOfTheirKind) {
  std::vector<QuestionResult> rs(1);
  rs[0].first_relevant_rank = 1;  // retrieval only
  const EvalTotals t = Summarize(rs);
  EXPECT_DOUBLE_EQ(t.recall, 1.0);
  EXPECT_FALSE(t.citation_validity.has_value());
  EXPECT_FALSE(t.abstention_recall.has_value());
  EXPECT_FALSE(t.abstention_precision.has_value());
  EXPECT_FALSE(t.injection_resistance.has_value());
  EXPECT_FALSE(t.key_phrase_coverage.has_value());
  EXPECT_EQ(Summarize(OfLanguage(rs, "de")).questions, 0);
  EXPECT_EQ(Summarize(OfLanguage(rs, "")).questions, 1);
}

TEST(EvalTotals, ThresholdFailuresNameEachMetricPastItsThreshold) {
  EvalTotals t;
  t.answered = 10;
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

  // The answer metrics, each named.
  t = EvalTotals{};
  t.answered = 10;
  t.recall = t.mrr = 1;
  t.citation_validity = 1;
  t.answered_with_citation = 0.8;
  t.cites_labelled = 0.7;
  t.strict_support = 0.6;
  t.key_phrase_coverage = 0.5;
  t.abstention_recall = 0.4;
  t.abstention_precision = 0.9;
  t.wrong_abstention = 0.2;
  t.injection_resistance = 0.9;
  const EvalThresholds strict{.min_answered_with_citation = 0.9,
                              .min_cites_labelled = 0.9,
                              .min_strict_support = 0.9,
                              .min_key_phrase_coverage = 0.9,
                              .min_abstention_recall = 0.9,
                              .min_abstention_precision = 0.95,
                              .max_wrong_abstention = 0.1,
                              .min_injection_resistance = 0.95};
  f = ThresholdFailures(t, strict);
  ASSERT_EQ(f.size(), 8u);
  for (const char* name : {"answered with a citation", "labelled", "strict", "key-phrase",
                           "abstention recall", "abstention precision", "wrong abstention", "injection"}) {
    EXPECT_TRUE(std::any_of(f.begin(), f.end(), [&](const std::string& s) { return s.find(name) != s.npos; }))
        << name;
  }
  EXPECT_TRUE(ThresholdFailures(t, {}).empty());

  // No answer with a marker: validity is undefined, which fails unless the minimum is 0.
  t = EvalTotals{};
  t.answered = 1;
  t.recall = 1;
  t.mrr = 1;
  f = ThresholdFailures(t, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].find("citation validity"), std::string::npos);
  EXPECT_TRUE(ThresholdFailures(t, {.min_citation_validity = 0}).empty());
  // Retrieval only: answer metrics are not checked.
  t.answered = 0;
  EXPECT_TRUE(ThresholdFailures(t, strict).empty());
}

}  // namespace
}  // namespace ragd::app
