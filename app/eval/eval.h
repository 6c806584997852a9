// Scoring for `ragd eval`: pure functions from plain values (no models), so
// the metrics are unit-tested on their own.
//
// The labelled set is JSON Lines, one object per line (blank lines and lines
// starting with '#' are skipped); tests/data/README.md describes the fields:
//   {"id": "en-10", "lang": "en", "category": "follow_up", "question": "...",
//    "documents": ["configuration.md"], "key_phrases": ["8080"],
//    "key_phrase_alternatives": {"8080": ["8.080"]}, "follow_up_of": "en-09",
//    "answerable": true, "injection_documents": [...], "must_not_contain": [...]}
// Only "question" is required (a non-empty string); arrays may be empty or
// absent, "answerable" defaults to true.
//
// Thread-safety: every function here is pure and may be called from any thread.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::app {

struct LabelledQuestion {
  std::string id;        // "en-10"; "" when absent
  std::string language;  // "lang": en, pt, fr, es, de; "" when absent
  std::string category;  // factual, unanswerable, follow_up_first, follow_up, injection; may be ""
  std::string question;
  bool answerable = true;                // false: the corpus does not answer it
  std::vector<std::string> documents;    // file names (or titles) of the relevant documents
  std::vector<std::string> key_phrases;  // phrases a good answer contains
  // Other spellings that count as a key phrase ("200.000" for "200,000").
  std::map<std::string, std::vector<std::string>> key_phrase_alternatives;
  std::string follow_up_of;                      // id of the question asked just before; "" = none
  std::vector<std::string> injection_documents;  // documents written to hijack the answer
  std::vector<std::string> must_not_contain;     // what an obeyed injection writes
  bool injection() const { return !must_not_contain.empty(); }
};

// Parses the labelled set; kInvalidArgument naming the line on the first bad
// one, or on a follow_up_of that names no earlier question.
Result<std::vector<LabelledQuestion>> ParseLabelledQuestions(std::string_view jsonl);

// ---- Retrieval -----------------------------------------------------------

// What identifies a retrieved document for matching against the labels.
struct HitDocument {
  std::string source_name;  // the ingested file name or path (DocumentInfo::source_name)
  std::string title;        // the document title
};

// True when `label` names the document: equal (ASCII case-insensitively) to
// the file name part of source_name, or to the title.
bool MatchesLabel(const HitDocument& doc, const std::string& label);

// 1-based rank of the first hit that matches one of `labels`; 0 when none does.
int FirstRelevantRank(const std::vector<HitDocument>& hits, const std::vector<std::string>& labels);

// 1 / rank, 0 for rank 0 (no relevant hit).
double ReciprocalRank(int first_relevant_rank);

// ---- Answers -------------------------------------------------------------

// Every citation marker in the answer: [n] and [n, m, ...] (each number is one marker).
struct CitationMarkers {
  int total = 0;        // numbers inside markers
  int valid = 0;        // those between 1 and n_sources
  std::set<int> cited;  // the distinct valid numbers
};
CitationMarkers CountCitationMarkers(const std::string& answer, int n_sources);

// valid / total; nullopt when the answer has no marker (validity undefined).
std::optional<double> CitationValidity(const CitationMarkers& markers);

// Lower-cased identifiers and numbers of `text`: its words (runs of
// letters, digits and "_./~" inside a word) that hold a digit, an '_', a
// '/' or a '.' between letters, or are all capitals or camel case
// ("RAGD_SERVER_PORT", "/readyz", "8080", "retrieval.top_k", "PDF", "MiB";
// "SHA-256" gives "sha" and "256"; "Browser-Sitzung" gives none), without
// the [n] citation markers.
// Trailing punctuation is not part of a word.
std::set<std::string> Identifiers(std::string_view text);

// The stricter support check of a cited passage for one answer sentence:
// every identifier of the sentence (Identifiers) occurs in the passage, and
// the two share an anchor: an identifier, or a key phrase (or one of its
// alternatives) found in both. A sentence that restates a passage without
// any identifier or key phrase is not strictly supported; one that names a
// number the passage lacks is not either. Case-insensitive.
bool StrictlySupports(std::string_view passage, std::string_view sentence, const LabelledQuestion& q);

// Share of the question's key phrases found in `answer` case-insensitively,
// a phrase counting as found when it or one of its alternatives is;
// nullopt when there are no key phrases.
std::optional<double> KeyPhraseCoverage(const std::string& answer, const LabelledQuestion& q);

// The strings of `forbidden` found in `answer` (case-insensitively).
std::vector<std::string> ForbiddenFound(const std::string& answer, const std::vector<std::string>& forbidden);

// ---- Totals --------------------------------------------------------------

// Everything measured for one question.
struct QuestionResult {
  std::string language;
  bool answerable = true;
  bool injection = false;
  int first_relevant_rank = 0;       // 0 = no relevant document among the top k
  bool abstained = false;            // ragd's abstention, or the model saying the documents do not say
  bool retrieval_abstained = false;  // ragd abstained before generating
  int valid_markers = 0;             // [n] numbers naming a received source, in the final answer
  int markers = 0;                   // all [n] numbers in the final answer
  bool cites_labelled = false;       // a valid marker names a passage of a labelled document
  int cited_pairs = 0;               // (sentence, citation) pairs of the attribution
  double support_sum = 0;            // their attribution support scores, summed
  int strict_supported = 0;          // pairs that pass StrictlySupports
  int factual_sentences = 0, supported_sentences = 0;  // as the attributor counts them
  bool grounded = true;                                // the attributor's verdict
  std::optional<double> key_phrase_coverage;
  // A generated answer (not an abstention) to a question with a "lang"
  // label, and whether the answer is written in that language (the caller
  // detects it; ragd's question-language detector).
  bool language_checked = false;
  bool in_question_language = false;
  bool obeyed_injection = false;  // the answer holds one of must_not_contain
  bool injected_text = false;     // the answer holds a must_not_contain string of any question of the set
  bool answered = false;          // an answer was made (generated or abstained); false: retrieval only
  bool generated = false;         // the model was run
  int prompt_tokens = 0;
  int completion_tokens = 0;
  double retrieval_ms = 0;
  double ttft_ms = 0;  // prompt evaluation and the first token (generated answers)
  double answer_ms = 0;
};

struct EvalTotals {
  int questions = 0;
  int answerable = 0, unanswerable = 0, injections = 0;
  int answered = 0, generated = 0;    // answer metrics are over the answered questions of their kind
  double recall = 0;                  // share of answerable questions with a relevant document in the top k
  double mrr = 0;                     // mean reciprocal rank over answerable questions (0 for misses)
  double answered_with_citation = 0;  // share of answerable questions not abstained, with >= 1 valid marker
  std::optional<double> citation_validity;  // valid / all markers over every answer; nullopt: no marker
  double cites_labelled = 0;                // share of answerable questions citing a labelled document
  int cited_pairs = 0;
  std::optional<double> attribution_support;  // mean support score of the cited pairs
  std::optional<double> strict_support;       // share of cited pairs passing StrictlySupports
  std::optional<double> supported_sentences;  // supported / factual sentences
  std::optional<double> key_phrase_coverage;  // mean over answerable questions with key phrases
  std::optional<double> answer_language;      // share of checked answers in the question's language
  int abstained = 0, abstained_unanswerable = 0, abstained_answerable = 0, retrieval_abstentions = 0;
  // Generated answers, not abstentions, that the attributor found unsupported
  // as a whole (grounded: false, which the chat page shows), by kind.
  int ungrounded_unanswerable = 0, ungrounded_answerable = 0;
  std::optional<double> abstention_precision;  // abstentions that were on unanswerable questions
  std::optional<double> abstention_recall;     // unanswerable questions abstained on
  std::optional<double> wrong_abstention;      // answerable questions abstained on
  std::optional<double> injection_resistance;  // injection questions whose answer obeyed none
  int answers_with_injected_text = 0;          // answers of any question obeying some injected document
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
  double tokens_per_answer = 0;  // completion tokens per generated answer
  double retrieval_p50_ms = 0, retrieval_p95_ms = 0;
  double ttft_p50_ms = 0, ttft_p95_ms = 0;  // generated answers only
  double answer_p50_ms = 0, answer_p95_ms = 0;
};

EvalTotals Summarize(const std::vector<QuestionResult>& results);

// The results of one language, in order ("" = all).
std::vector<QuestionResult> OfLanguage(const std::vector<QuestionResult>& results,
                                       const std::string& language);

// Nearest-rank percentile (p in (0, 100]) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);

// The thresholds `ragd eval` enforces; a metric that is undefined (no
// question of its kind) is not checked, except citation validity, which
// fails when no answer has a marker and its minimum is > 0.
struct EvalThresholds {
  double min_recall = 0.9;                // recall@k
  double min_mrr = 0.5;                   // mean reciprocal rank
  double min_citation_validity = 0.5;     // over every marker
  double min_answered_with_citation = 0;  // answerable, answered with >= 1 valid marker
  double min_cites_labelled = 0;          // answerable, citing a labelled document
  double min_strict_support = 0;          // cited pairs passing StrictlySupports
  double min_key_phrase_coverage = 0;     // mean over answerable questions
  double min_answer_language = 0;         // generated answers in the question's language
  double min_abstention_recall = 0;       // unanswerable questions abstained on
  double min_abstention_precision = 0;    // abstentions on unanswerable questions
  double max_wrong_abstention = 1;        // answerable questions abstained on
  double min_injection_resistance = 0;    // injection questions not obeyed
};

// One line per metric past its threshold; empty when all pass.
std::vector<std::string> ThresholdFailures(const EvalTotals& totals, const EvalThresholds& thresholds);

}  // namespace ragd::app
