#include "app/eval/eval.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/services/rag_prompt.h"
#include "common/text.h"

namespace ragd::app {
namespace {

bool ContainsNoCase(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return false;
  return AsciiLower(haystack).find(AsciiLower(needle)) != std::string::npos;
}

bool IsWordByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || std::isalnum(u);
}

Result<std::vector<std::string>> StringArray(const nlohmann::json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end()) return out;
  if (!it->is_array())
    return Status::InvalidArgument(std::string("'") + key + "' must be an array of strings");
  for (const auto& v : *it) {
    if (!v.is_string())
      return Status::InvalidArgument(std::string("'") + key + "' must be an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Result<LabelledQuestion> ParseLine(std::string_view line) {
  auto obj = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded() || !obj.is_object()) return Status::InvalidArgument("not a JSON object");
  LabelledQuestion q;
  auto it = obj.find("question");
  if (it == obj.end() || !it->is_string() || it->get<std::string>().empty())
    return Status::InvalidArgument("'question' must be a non-empty string");
  q.question = it->get<std::string>();
  auto docs = StringArray(obj, "documents");
  if (!docs.ok()) return docs.status();
  q.documents = std::move(docs).value();
  auto phrases = StringArray(obj, "key_phrases");
  if (!phrases.ok()) return phrases.status();
  q.key_phrases = std::move(phrases).value();
  return q;
}

std::optional<double> Mean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

Result<std::vector<LabelledQuestion>> ParseLabelledQuestions(std::string_view jsonl) {
  std::vector<LabelledQuestion> out;
  size_t line_no = 0, pos = 0;
  while (pos < jsonl.size()) {
    size_t end = jsonl.find('\n', pos);
    if (end == std::string_view::npos) end = jsonl.size();
    std::string_view line = jsonl.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    auto q = ParseLine(line);
    if (!q.ok())
      return Status::InvalidArgument("line " + std::to_string(line_no) + ": " + q.status().message());
    out.push_back(std::move(q).value());
  }
  return out;
}

bool MatchesLabel(const HitDocument& doc, const std::string& label) {
  if (label.empty()) return false;
  std::string_view name = doc.source_name;
  if (size_t slash = name.find_last_of("/\\"); slash != std::string_view::npos) name = name.substr(slash + 1);
  return AsciiLower(name) == AsciiLower(label) || AsciiLower(doc.title) == AsciiLower(label);
}

int FirstRelevantRank(const std::vector<HitDocument>& hits, const std::vector<std::string>& labels) {
  for (size_t i = 0; i < hits.size(); ++i)
    for (const std::string& l : labels)
      if (MatchesLabel(hits[i], l)) return static_cast<int>(i) + 1;
  return 0;
}

double ReciprocalRank(int first_relevant_rank) {
  return first_relevant_rank > 0 ? 1.0 / first_relevant_rank : 0.0;
}

CitationMarkers CountCitationMarkers(const std::string& answer, int n_sources) {
  CitationMarkers m;
  for (long v : CitationMarkerNumbers(answer)) {
    ++m.total;
    if (v >= 1 && v <= n_sources) {
      ++m.valid;
      m.cited.insert(static_cast<int>(v));
    }
  }
  return m;
}

std::optional<double> CitationValidity(const CitationMarkers& markers) {
  if (markers.total == 0) return std::nullopt;
  return static_cast<double>(markers.valid) / markers.total;
}

std::set<std::string> ContentWords(std::string_view text) {
  static const std::set<std::string> kFunctionWords = {
      "about", "also", "been",  "being", "could", "does", "each",   "from",  "have", "into", "just",
      "more",  "most", "only",  "other", "over",  "same", "should", "some",  "such", "than", "that",
      "their", "them", "then",  "there", "these", "they", "this",   "those", "very", "want", "were",
      "what",  "when", "where", "which", "while", "will", "with",   "would", "your"};
  std::set<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsWordByte(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && IsWordByte(text[j])) ++j;
    if (j - i >= 4) {
      std::string w = AsciiLower(text.substr(i, j - i));
      if (kFunctionWords.count(w) == 0) out.insert(std::move(w));
    }
    i = j;
  }
  return out;
}

bool PassageSupports(std::string_view passage, const std::string& answer,
                     const std::vector<std::string>& key_phrases) {
  for (const std::string& p : key_phrases)
    if (ContainsNoCase(passage, p)) return true;
  const std::set<std::string> a = ContentWords(answer);
  int shared = 0;
  for (const std::string& w : ContentWords(passage))
    if (a.count(w) != 0 && ++shared >= 2) return true;
  return false;
}

std::optional<double> KeyPhraseCoverage(const std::string& answer,
                                        const std::vector<std::string>& key_phrases) {
  if (key_phrases.empty()) return std::nullopt;
  int found = 0;
  for (const std::string& p : key_phrases) found += ContainsNoCase(answer, p) ? 1 : 0;
  return static_cast<double>(found) / static_cast<double>(key_phrases.size());
}

bool SaysNotInSources(const std::string& answer) {
  for (const char* p : {"do not say", "does not say", "not in the", "don't know"})
    if (ContainsNoCase(answer, p)) return true;
  return false;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t idx = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[idx];
}

EvalTotals Summarize(const std::vector<QuestionResult>& results) {
  EvalTotals t;
  t.questions = static_cast<int>(results.size());
  std::vector<double> validity, support, coverage, retrieval_ms, answer_ms;
  int hits = 0;
  double rr = 0;
  for (const QuestionResult& r : results) {
    hits += r.first_relevant_rank > 0 ? 1 : 0;
    rr += ReciprocalRank(r.first_relevant_rank);
    if (r.citation_validity) validity.push_back(*r.citation_validity);
    if (r.citation_support) support.push_back(*r.citation_support);
    if (r.key_phrase_coverage) coverage.push_back(*r.key_phrase_coverage);
    t.not_in_sources += r.not_in_sources ? 1 : 0;
    t.prompt_tokens += r.prompt_tokens;
    t.completion_tokens += r.completion_tokens;
    retrieval_ms.push_back(r.retrieval_ms);
    answer_ms.push_back(r.answer_ms);
  }
  if (t.questions > 0) {
    t.recall = static_cast<double>(hits) / t.questions;
    t.mrr = rr / t.questions;
  }
  t.answers_with_markers = static_cast<int>(validity.size());
  t.citation_validity = Mean(validity);
  t.answers_citing = static_cast<int>(support.size());
  t.citation_support = Mean(support);
  t.key_phrase_coverage = Mean(coverage);
  t.retrieval_p50_ms = Percentile(retrieval_ms, 50);
  t.retrieval_p95_ms = Percentile(retrieval_ms, 95);
  t.answer_p50_ms = Percentile(answer_ms, 50);
  t.answer_p95_ms = Percentile(answer_ms, 95);
  return t;
}

std::vector<std::string> ThresholdFailures(const EvalTotals& totals, const EvalThresholds& thresholds) {
  std::vector<std::string> out;
  if (totals.recall < thresholds.min_recall)
    out.push_back("recall@k " + Fixed(totals.recall) + " < " + Fixed(thresholds.min_recall));
  if (totals.mrr < thresholds.min_mrr)
    out.push_back("MRR " + Fixed(totals.mrr) + " < " + Fixed(thresholds.min_mrr));
  if (!totals.citation_validity) {
    if (thresholds.min_citation_validity > 0)
      out.push_back("citation validity undefined (no answer has a [n] marker) < " +
                    Fixed(thresholds.min_citation_validity));
  } else if (*totals.citation_validity < thresholds.min_citation_validity) {
    out.push_back("citation validity " + Fixed(*totals.citation_validity) + " < " +
                  Fixed(thresholds.min_citation_validity));
  }
  return out;
}

}  // namespace ragd::app
