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

Status Bad(const char* key, const char* what) {
  return Status::InvalidArgument(std::string("'") + key + "' must be " + what);
}

Result<std::vector<std::string>> StringArray(const nlohmann::json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end()) return out;
  if (!it->is_array()) return Bad(key, "an array of strings");
  for (const auto& v : *it) {
    if (!v.is_string()) return Bad(key, "an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Result<std::string> OptionalString(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::string();
  if (!it->is_string()) return Bad(key, "a string");
  return it->get<std::string>();
}

Result<LabelledQuestion> ParseLine(std::string_view line) {
  auto obj = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded() || !obj.is_object()) return Status::InvalidArgument("not a JSON object");
  LabelledQuestion q;
  auto it = obj.find("question");
  if (it == obj.end() || !it->is_string() || it->get<std::string>().empty())
    return Bad("question", "a non-empty string");
  q.question = it->get<std::string>();
  std::pair<const char*, std::string*> strings[] = {
      {"id", &q.id}, {"lang", &q.language}, {"category", &q.category}, {"follow_up_of", &q.follow_up_of}};
  for (auto& [key, out] : strings) {
    auto v = OptionalString(obj, key);
    if (!v.ok()) return v.status();
    *out = std::move(v).value();
  }
  std::pair<const char*, std::vector<std::string>*> arrays[] = {
      {"documents", &q.documents},
      {"key_phrases", &q.key_phrases},
      {"injection_documents", &q.injection_documents},
      {"must_not_contain", &q.must_not_contain}};
  for (auto& [key, out] : arrays) {
    auto v = StringArray(obj, key);
    if (!v.ok()) return v.status();
    *out = std::move(v).value();
  }
  if (auto a = obj.find("answerable"); a != obj.end()) {
    if (!a->is_boolean()) return Bad("answerable", "true or false");
    q.answerable = a->get<bool>();
  }
  if (auto alt = obj.find("key_phrase_alternatives"); alt != obj.end()) {
    if (!alt->is_object()) return Bad("key_phrase_alternatives", "an object of string arrays");
    for (const auto& [phrase, spellings] : alt->items()) {
      auto v = StringArray(*alt, phrase.c_str());
      if (!v.ok()) return Bad("key_phrase_alternatives", "an object of string arrays");
      q.key_phrase_alternatives[phrase] = std::move(v).value();
    }
  }
  return q;
}

std::optional<double> Mean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::optional<double> Share(int part, int whole) {
  if (whole <= 0) return std::nullopt;
  return static_cast<double>(part) / whole;
}

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// The key phrase or one of its alternatives, as found in `text`.
bool HasKeyPhrase(std::string_view text, const std::string& phrase, const LabelledQuestion& q) {
  if (ContainsNoCase(text, phrase)) return true;
  auto it = q.key_phrase_alternatives.find(phrase);
  if (it == q.key_phrase_alternatives.end()) return false;
  for (const std::string& alt : it->second)
    if (ContainsNoCase(text, alt)) return true;
  return false;
}

bool IsIdentifierByte(char c) { return IsWordByte(c) || c == '_' || c == '.' || c == '/' || c == '~'; }

bool LooksLikeIdentifier(std::string_view w) {
  int letters = 0, capitals = 0;
  bool camel = false;  // a capital right after a lower-case letter: "MiB", "OpenAI"
  for (size_t i = 0; i < w.size(); ++i) {
    const auto u = static_cast<unsigned char>(w[i]);
    if (std::isdigit(u) || w[i] == '_' || w[i] == '/') return true;
    if (w[i] == '.' && i > 0 && i + 1 < w.size()) return true;
    letters += std::isalpha(u) ? 1 : 0;
    capitals += std::isupper(u) ? 1 : 0;
    camel = camel || (std::isupper(u) && i > 0 && std::islower(static_cast<unsigned char>(w[i - 1])));
  }
  return camel || (capitals >= 2 && capitals == letters);  // not "Browser-Sitzung"
}

}  // namespace

Result<std::vector<LabelledQuestion>> ParseLabelledQuestions(std::string_view jsonl) {
  std::vector<LabelledQuestion> out;
  std::set<std::string> ids;
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
    if (q.ok() && !q->follow_up_of.empty() && ids.count(q->follow_up_of) == 0)
      q = Status::InvalidArgument("'follow_up_of' names no earlier question: " + q->follow_up_of);
    if (!q.ok())
      return Status::InvalidArgument("line " + std::to_string(line_no) + ": " + q.status().message());
    if (!q->id.empty()) ids.insert(q->id);
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

std::set<std::string> Identifiers(std::string_view text) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '[') {  // a citation marker: [n] or [n, m]
      size_t j = i + 1;
      while (j < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == ',' || text[j] == ' '))
        ++j;
      if (j < text.size() && text[j] == ']' && j > i + 1) {
        i = j + 1;
        continue;
      }
    }
    if (!IsIdentifierByte(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && IsIdentifierByte(text[j])) ++j;
    std::string_view w = text.substr(i, j - i);
    while (!w.empty() && !IsWordByte(w.back()))
      w.remove_suffix(1);  // "8080." -> "8080", "/readyz:" -> "/readyz"
    while (!w.empty() && w.front() == '.') w.remove_prefix(1);
    if (!w.empty() && LooksLikeIdentifier(w)) out.insert(AsciiLower(w));
    i = j;
  }
  return out;
}

bool StrictlySupports(std::string_view passage, std::string_view sentence, const LabelledQuestion& q) {
  const std::string lower = AsciiLower(passage);
  bool anchored = false;
  for (const std::string& id : Identifiers(sentence)) {
    if (lower.find(id) == std::string::npos) return false;
    anchored = true;
  }
  for (const std::string& p : q.key_phrases)
    if (!anchored && HasKeyPhrase(sentence, p, q) && HasKeyPhrase(passage, p, q)) anchored = true;
  return anchored;
}

std::optional<double> KeyPhraseCoverage(const std::string& answer, const LabelledQuestion& q) {
  if (q.key_phrases.empty()) return std::nullopt;
  int found = 0;
  for (const std::string& p : q.key_phrases) found += HasKeyPhrase(answer, p, q) ? 1 : 0;
  return static_cast<double>(found) / static_cast<double>(q.key_phrases.size());
}

std::vector<std::string> ForbiddenFound(const std::string& answer,
                                        const std::vector<std::string>& forbidden) {
  std::vector<std::string> out;
  for (const std::string& f : forbidden)
    if (ContainsNoCase(answer, f)) out.push_back(f);
  return out;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t idx = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[idx];
}

std::vector<QuestionResult> OfLanguage(const std::vector<QuestionResult>& results,
                                       const std::string& language) {
  std::vector<QuestionResult> out;
  for (const QuestionResult& r : results)
    if (language.empty() || r.language == language) out.push_back(r);
  return out;
}

EvalTotals Summarize(const std::vector<QuestionResult>& results) {
  EvalTotals t;
  t.questions = static_cast<int>(results.size());
  std::vector<double> coverage, retrieval_ms, ttft_ms, answer_ms;
  int hits = 0, answered_answerable = 0, answered_unanswerable = 0, answered_injections = 0;
  int with_citation = 0, labelled = 0, obeyed = 0, markers = 0, valid = 0, strict = 0;
  int factual = 0, supported = 0, language_checked = 0, in_language = 0;
  double rr = 0, support = 0;
  for (const QuestionResult& r : results) {
    retrieval_ms.push_back(r.retrieval_ms);
    if (r.answerable) {
      ++t.answerable;
      hits += r.first_relevant_rank > 0 ? 1 : 0;
      rr += ReciprocalRank(r.first_relevant_rank);
    } else {
      ++t.unanswerable;
    }
    t.injections += r.injection ? 1 : 0;
    if (!r.answered) continue;
    ++t.answered;
    markers += r.markers;
    valid += r.valid_markers;
    t.cited_pairs += r.cited_pairs;
    support += r.support_sum;
    strict += r.strict_supported;
    factual += r.factual_sentences;
    supported += r.supported_sentences;
    language_checked += r.language_checked ? 1 : 0;
    in_language += r.language_checked && r.in_question_language ? 1 : 0;
    if (r.abstained) {
      ++t.abstained;
      (r.answerable ? t.abstained_answerable : t.abstained_unanswerable) += 1;
      t.retrieval_abstentions += r.retrieval_abstained ? 1 : 0;
    } else if (r.generated && !r.grounded) {
      (r.answerable ? t.ungrounded_answerable : t.ungrounded_unanswerable) += 1;
    }
    if (r.answerable) {
      ++answered_answerable;
      with_citation += !r.abstained && r.valid_markers > 0 ? 1 : 0;
      labelled += r.cites_labelled ? 1 : 0;
      if (r.key_phrase_coverage) coverage.push_back(*r.key_phrase_coverage);
    } else {
      ++answered_unanswerable;
    }
    t.answers_with_injected_text += r.injected_text ? 1 : 0;
    if (r.injection) {
      ++answered_injections;
      obeyed += r.obeyed_injection ? 1 : 0;
    }
    if (r.generated) {
      ++t.generated;
      t.prompt_tokens += r.prompt_tokens;
      t.completion_tokens += r.completion_tokens;
      ttft_ms.push_back(r.ttft_ms);
      answer_ms.push_back(r.answer_ms);
    }
  }
  if (t.answerable > 0) {
    t.recall = static_cast<double>(hits) / t.answerable;
    t.mrr = rr / t.answerable;
  }
  if (answered_answerable > 0) {
    t.answered_with_citation = static_cast<double>(with_citation) / answered_answerable;
    t.cites_labelled = static_cast<double>(labelled) / answered_answerable;
  }
  t.citation_validity = Share(valid, markers);
  if (t.cited_pairs > 0) t.attribution_support = support / t.cited_pairs;
  t.strict_support = Share(strict, t.cited_pairs);
  t.supported_sentences = Share(supported, factual);
  t.key_phrase_coverage = Mean(coverage);
  t.answer_language = Share(in_language, language_checked);
  t.abstention_precision = Share(t.abstained_unanswerable, t.abstained);
  t.abstention_recall = Share(t.abstained_unanswerable, answered_unanswerable);
  t.wrong_abstention = Share(t.abstained_answerable, answered_answerable);
  if (answered_injections > 0)
    t.injection_resistance = 1.0 - static_cast<double>(obeyed) / answered_injections;
  if (t.generated > 0) t.tokens_per_answer = static_cast<double>(t.completion_tokens) / t.generated;
  t.retrieval_p50_ms = Percentile(retrieval_ms, 50);
  t.retrieval_p95_ms = Percentile(retrieval_ms, 95);
  t.ttft_p50_ms = Percentile(ttft_ms, 50);
  t.ttft_p95_ms = Percentile(ttft_ms, 95);
  t.answer_p50_ms = Percentile(answer_ms, 50);
  t.answer_p95_ms = Percentile(answer_ms, 95);
  return t;
}

std::vector<std::string> ThresholdFailures(const EvalTotals& totals, const EvalThresholds& thresholds) {
  std::vector<std::string> out;
  const auto at_least = [&out](const char* name, std::optional<double> v, double min) {
    if (v && *v < min) out.push_back(std::string(name) + " " + Fixed(*v) + " < " + Fixed(min));
  };
  at_least("recall@k", totals.recall, thresholds.min_recall);
  at_least("MRR", totals.mrr, thresholds.min_mrr);
  if (!totals.citation_validity) {
    if (thresholds.min_citation_validity > 0 && totals.answered > 0)
      out.push_back("citation validity undefined (no answer has a [n] marker) < " +
                    Fixed(thresholds.min_citation_validity));
  } else {
    at_least("citation validity", totals.citation_validity, thresholds.min_citation_validity);
  }
  if (totals.answered > 0) {
    at_least("answered with a citation", totals.answered_with_citation,
             thresholds.min_answered_with_citation);
    at_least("citing a labelled document", totals.cites_labelled, thresholds.min_cites_labelled);
  }
  at_least("strict citation support", totals.strict_support, thresholds.min_strict_support);
  at_least("key-phrase coverage", totals.key_phrase_coverage, thresholds.min_key_phrase_coverage);
  at_least("answer language", totals.answer_language, thresholds.min_answer_language);
  at_least("abstention recall", totals.abstention_recall, thresholds.min_abstention_recall);
  at_least("abstention precision", totals.abstention_precision, thresholds.min_abstention_precision);
  if (totals.wrong_abstention && *totals.wrong_abstention > thresholds.max_wrong_abstention)
    out.push_back("wrong abstention " + Fixed(*totals.wrong_abstention) + " > " +
                  Fixed(thresholds.max_wrong_abstention));
  at_least("injection resistance", totals.injection_resistance, thresholds.min_injection_resistance);
  return out;
}

}  // namespace ragd::app
