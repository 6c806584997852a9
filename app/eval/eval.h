// Scoring for `ragd eval`: pure functions from plain values (no models), so
// the metrics are unit-tested on their own.
//
// The labelled set is JSON Lines, one object per line (blank lines and lines
// starting with '#' are skipped):
//   {"question": "...", "documents": ["configuration.md", ...], "key_phrases": ["RAGD_SERVER_PORT", ...]}
// "question" is a non-empty string; "documents" (the file names or titles of
// the documents that answer it) and "key_phrases" are arrays of strings, each
// may be empty or absent.
//
// Thread-safety: every function here is pure and may be called from any thread.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::app {

struct LabelledQuestion {
  std::string question;
  std::vector<std::string> documents;    // file names (or titles) of the relevant documents
  std::vector<std::string> key_phrases;  // phrases a good answer contains
};

// Parses the labelled set; kInvalidArgument naming the line on the first bad one.
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

// Lower-cased words of >= 4 bytes (runs of ASCII letters/digits and non-ASCII
// bytes), without common function words ("that", "with", "from", ...).
std::set<std::string> ContentWords(std::string_view text);

// A cited passage supports the answer when it contains one of the key phrases
// (case-insensitively) or shares at least 2 content words with the answer.
bool PassageSupports(std::string_view passage, const std::string& answer,
                     const std::vector<std::string>& key_phrases);

// Share of `key_phrases` found in `answer` case-insensitively; nullopt when
// there are no key phrases.
std::optional<double> KeyPhraseCoverage(const std::string& answer,
                                        const std::vector<std::string>& key_phrases);

// True when the answer says the sources do not hold the answer ("do not say",
// "does not say", "not in the", "don't know"; case-insensitive).
bool SaysNotInSources(const std::string& answer);

// ---- Totals --------------------------------------------------------------

// Everything measured for one question.
struct QuestionResult {
  int first_relevant_rank = 0;              // 0 = no relevant document among the top k
  std::optional<double> citation_validity;  // nullopt: the answer has no marker
  std::optional<double> citation_support;   // supported / cited sources; nullopt: nothing cited
  std::optional<double> key_phrase_coverage;
  bool not_in_sources = false;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  double retrieval_ms = 0;
  double answer_ms = 0;
};

struct EvalTotals {
  int questions = 0;
  double recall = 0;  // share of questions with a relevant document in the top k
  double mrr = 0;     // mean reciprocal rank (0 for misses)
  int answers_with_markers = 0;
  std::optional<double> citation_validity;    // mean over answers with markers
  int answers_citing = 0;                     // answers with at least one valid marker
  std::optional<double> citation_support;     // mean over answers citing a source
  std::optional<double> key_phrase_coverage;  // mean over questions with key phrases
  int not_in_sources = 0;
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
  double retrieval_p50_ms = 0, retrieval_p95_ms = 0;
  double answer_p50_ms = 0, answer_p95_ms = 0;
};

EvalTotals Summarize(const std::vector<QuestionResult>& results);

// Nearest-rank percentile (p in (0, 100]) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);

// The thresholds `ragd eval` enforces.
struct EvalThresholds {
  double min_recall = 0.9;             // recall@k
  double min_mrr = 0.5;                // mean reciprocal rank
  double min_citation_validity = 0.5;  // over answers with markers; no marker at all fails when > 0
};

// One line per metric under its threshold; empty when all pass.
std::vector<std::string> ThresholdFailures(const EvalTotals& totals, const EvalThresholds& thresholds);

}  // namespace ragd::app
