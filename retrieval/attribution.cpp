#include "retrieval/attribution.h"

#include <algorithm>

#include "common/text.h"
#include "retrieval/abstention.h"
#include "retrieval/embedder.h"
#include "retrieval/sentences.h"

namespace ragd::retrieval {
namespace {

// Bytes of lookahead that FindSentenceBreak may need past a sentence end
// (blanks and markers): a forced cut waits for this much more text so that it
// lands where it would if the whole answer had come at once.
constexpr size_t kLookaheadMargin = 64;

bool IsBlankByte(char c) { return c == ' ' || c == '\t'; }
bool IsSpaceByte(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// The sentence as scored: markers and a leading list number ("2. ") removed.
std::string ClaimText(std::string_view sentence, const std::vector<CitationMarker>& markers) {
  std::string claim;
  size_t pos = 0;
  for (const CitationMarker& m : markers) {
    claim.append(sentence.substr(pos, m.begin - pos));
    pos = m.end;
  }
  claim.append(sentence.substr(pos));
  size_t digits = 0;
  while (digits < claim.size() && claim[digits] >= '0' && claim[digits] <= '9') ++digits;
  if (digits > 0 && digits + 1 < claim.size() && (claim[digits] == '.' || claim[digits] == ')') &&
      claim[digits + 1] == ' ')
    claim.erase(0, digits + 2);
  return claim;
}

std::string RenderMarker(const std::vector<int>& numbers) {
  std::string out = "[";
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(numbers[i]);
  }
  return out + "]";
}

// Where an added marker goes: before the sentence's final punctuation (after
// any closing quote, bracket or code span ahead of it), or at the end when the
// sentence has no final punctuation.
size_t MarkerInsertPosition(std::string_view s) {
  size_t pos = s.size();
  bool punctuation = false;
  while (pos > 0) {
    const std::string_view head = s.substr(0, pos);
    size_t len = 0;
    for (std::string_view p : {".", "!", "?", "\u2026", "\u3002", "\uFF01", "\uFF1F"}) {
      if (head.ends_with(p)) {
        len = p.size();
        punctuation = true;
      }
    }
    for (std::string_view c :
         {"\"", "'", ")", "*", "_", "`", "\u201D", "\u2019", "\u00BB", "\u300D", "\u300F"}) {
      if (len == 0 && head.ends_with(c)) len = c.size();
    }
    if (len == 0) break;
    pos -= len;
  }
  if (!punctuation) return s.size();
  // Closers before the punctuation stay with the text they close: the
  // marker never lands inside a code span, emphasis or parentheses.
  for (size_t i = pos; i < s.size(); ++i) {
    for (std::string_view p : {".", "!", "?", "\u2026", "\u3002", "\uFF01", "\uFF1F"}) {
      if (s.substr(i).starts_with(p)) return i;
    }
  }
  return pos;
}

// True when the byte before `pos` ends a CJK character (U+3000 and above in a
// 3-byte sequence), where no blank goes before a marker.
bool AfterCjk(std::string_view s, size_t pos) {
  if (pos < 3) return false;
  const auto lead = static_cast<unsigned char>(s[pos - 3]);
  return lead >= 0xE3 && lead <= 0xEF && (static_cast<unsigned char>(s[pos - 1]) & 0xC0) == 0x80;
}

}  // namespace

Result<Attributor> Attributor::Create(const std::vector<std::string>& sources, EmbedTextsFn embed,
                                      const AttributionOptions& options) {
  auto evidence = PreparePassages(sources, embed);
  if (!evidence.ok()) return evidence.status();
  return Attributor(std::move(evidence).value(), std::move(embed), options);
}

Result<std::string> Attributor::Feed(std::string_view delta) {
  pending_.append(delta);
  return Drain(/*at_end=*/false);
}

Result<std::string> Attributor::Finish() { return Drain(/*at_end=*/true); }

Result<std::string> Attributor::Drain(bool at_end) {
  std::string out;
  while (true) {
    size_t ws = 0;
    while (ws < pending_.size() && IsSpaceByte(pending_[ws])) ++ws;
    out.append(pending_, 0, ws);
    emitted_.append(pending_, 0, ws);
    pending_.erase(0, ws);
    if (pending_.empty()) break;

    std::optional<SentenceBreak> br = FindSentenceBreak(pending_, at_end);
    const size_t limit = options_.max_sentence_bytes;
    if ((!br || br->end > limit) && pending_.size() >= limit + kLookaheadMargin) {
      // No sentence end in sight: cut at the last blank before the limit.
      size_t cut = limit;
      while (cut > 0 && !IsBlankByte(pending_[cut - 1])) --cut;
      if (cut == 0) cut = CompleteUtf8Prefix(std::string_view(pending_).substr(0, limit));
      size_t end = cut;
      while (end > 0 && IsBlankByte(pending_[end - 1])) --end;
      br = SentenceBreak{end, cut};
    }
    if (!br) break;

    auto rewritten = Attribute(std::string_view(pending_).substr(0, br->end));
    if (!rewritten.ok()) return rewritten.status();
    const std::string_view trailing = std::string_view(pending_).substr(br->end, br->next - br->end);
    out += *rewritten;
    out.append(trailing);
    emitted_.append(trailing);
    pending_.erase(0, br->next);
  }
  return out;
}

Result<std::string> Attributor::Attribute(std::string_view sentence) {
  const int k = source_count();
  // Code blocks pass through untouched: a marker would change the code.
  if (in_code_block_ || sentence.starts_with("```")) {
    if (sentence.starts_with("```")) in_code_block_ = !in_code_block_;
    AttributedSentence out;
    out.code = true;
    out.begin = emitted_.size();
    emitted_ += sentence;
    out.end = emitted_.size();
    sentences_.push_back(std::move(out));
    return std::string(sentence);
  }
  const std::vector<CitationMarker> markers = FindCitationMarkers(sentence);
  const std::string claim = ClaimText(sentence, markers);
  const std::vector<ContentToken> tokens = ContentTokens(claim);
  const double weight = ContentWeight(tokens);
  const std::string_view trimmed = Trim(claim);

  // "The documents do not say how ..." states no fact: it cites nothing.
  const bool abstains = SaysSourcesDoNotAnswer(claim);
  AttributedSentence out;
  out.factual = !abstains && !trimmed.starts_with('#') && !trimmed.starts_with('|') &&
                !trimmed.ends_with(':') && weight >= options_.min_factual_weight;

  std::vector<double> scores(static_cast<size_t>(k), 0.0);
  if (k > 0 && weight > 0) {
    auto vectors = embed_({claim});
    if (!vectors.ok()) return vectors.status();
    if (vectors->size() != 1) return Status::Internal("embedding function returned no vector");
    std::vector<const PassageEvidence*> sources;
    for (const PassageEvidence& e : sources_) sources.push_back(&e);
    const std::vector<SupportFeatures> features = MeasureSupport(tokens, vectors->front(), sources);
    for (size_t i = 0; i < features.size(); ++i) scores[i] = SupportScore(features[i], options_.model);
  }
  // Sources that support the sentence, best first.
  std::vector<int> ranking;
  for (int n = 1; n <= k; ++n) {
    if (scores[static_cast<size_t>(n - 1)] > out.best_support || out.best_source == 0) {
      out.best_source = n;
      out.best_support = scores[static_cast<size_t>(n - 1)];
    }
    if (scores[static_cast<size_t>(n - 1)] >= options_.support_threshold) ranking.push_back(n);
  }
  std::stable_sort(ranking.begin(), ranking.end(), [&](int a, int b) {
    return scores[static_cast<size_t>(a - 1)] > scores[static_cast<size_t>(b - 1)];
  });

  std::vector<int> cited;
  auto is_cited = [&](int n) { return std::find(cited.begin(), cited.end(), n) != cited.end(); };
  std::string text;
  size_t pos = 0;
  for (const CitationMarker& m : markers) {
    std::vector<int> numbers;
    for (int n : m.numbers) {
      if (is_cited(n)) continue;  // a repeat
      if (abstains) {
        ++out.markers_removed;
        continue;
      }
      // Without content words ("[1]" alone on a line) there is nothing to
      // check: a marker in range stays.
      const bool in_range = n >= 1 && n <= k;
      if (in_range && (weight == 0 || scores[static_cast<size_t>(n - 1)] >= options_.keep_threshold)) {
        numbers.push_back(n);
        cited.push_back(n);
        ++out.markers_kept;
        continue;
      }
      auto best = std::find_if(ranking.begin(), ranking.end(), [&](int r) { return !is_cited(r); });
      if (best == ranking.end()) {
        ++out.markers_removed;
        continue;
      }
      numbers.push_back(*best);
      cited.push_back(*best);
      ++out.markers_replaced;
    }
    std::string_view before = sentence.substr(pos, m.begin - pos);
    if (numbers.empty()) {
      text.append(before);
      while (!text.empty() && IsBlankByte(text.back())) text.pop_back();
    } else {
      text.append(before);
      text += numbers == m.numbers ? std::string(sentence.substr(m.begin, m.end - m.begin))
                                   : RenderMarker(numbers);
    }
    pos = m.end;
  }
  text.append(sentence.substr(pos));
  size_t lead = 0;  // blanks left by a dropped marker at the start
  while (lead < text.size() && IsBlankByte(text[lead])) ++lead;
  text.erase(0, lead);

  if (cited.empty() && out.factual && !ranking.empty()) {
    const int n = ranking.front();
    const size_t at = MarkerInsertPosition(text);
    const bool blank = at > 0 && !IsSpaceByte(text[at - 1]) && !AfterCjk(text, at);
    text.insert(at, (blank ? " " : "") + RenderMarker({n}));
    cited.push_back(n);
    out.marker_added = true;
  }
  for (int n : cited) out.citations.push_back({n, scores[static_cast<size_t>(n - 1)]});
  out.supported = !cited.empty();
  if (text.empty()) return text;  // a lone marker that was dropped: no sentence left
  out.begin = emitted_.size();
  emitted_ += text;
  out.end = emitted_.size();
  sentences_.push_back(std::move(out));
  return text;
}

int Attributor::factual_sentences() const {
  return static_cast<int>(std::count_if(sentences_.begin(), sentences_.end(),
                                        [](const AttributedSentence& s) { return s.factual; }));
}

int Attributor::supported_factual_sentences() const {
  return static_cast<int>(
      std::count_if(sentences_.begin(), sentences_.end(),
                    [](const AttributedSentence& s) { return s.factual && s.supported; }));
}

bool Attributor::grounded() const {
  const int factual = factual_sentences();
  return factual == 0 || supported_factual_sentences() >= options_.grounded_share * factual;
}

EmbedTextsFn EmbedTextsWith(const Embedder& embedder) {
  return [&embedder](const std::vector<std::string>& texts) { return embedder.Embed(texts); };
}

Result<Attributor> AttributeAnswer(std::string_view answer, const std::vector<std::string>& sources,
                                   EmbedTextsFn embed, const AttributionOptions& options) {
  auto attributor = Attributor::Create(sources, std::move(embed), options);
  if (!attributor.ok()) return attributor.status();
  RAGD_RETURN_IF_ERROR(attributor->Feed(answer).status());
  RAGD_RETURN_IF_ERROR(attributor->Finish().status());
  return attributor;
}

}  // namespace ragd::retrieval
