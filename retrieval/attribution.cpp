#include "retrieval/attribution.h"

#include <algorithm>
#include <utility>

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

// A sentence streams before it ends only once it is this long: shorter, it
// may be a lead-in that is dropped at the end of the answer.
constexpr size_t kMinStreamedBytes = 24;

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

// Punctuation that an added marker goes before. ':' ends a lead-in ("To
// start it, run:"), whose marker goes before the colon.
constexpr std::string_view kFinalPunctuation[] = {".", "!", "?", ":", "\u2026", "\u3002", "\uFF01", "\uFF1F"};
// Closing quotes, brackets and Markdown emphasis that may stand between a
// sentence's last word and its final punctuation.
constexpr std::string_view kClosers[] = {"\"",     "'",      ")",      "*",      "_",     "`",
                                         "\u201D", "\u2019", "\u00BB", "\u300D", "\u300F"};

// Where an added marker goes: before the sentence's final punctuation (after
// any closing quote, bracket or code span ahead of it), or at the end when the
// sentence has no final punctuation.
size_t MarkerInsertPosition(std::string_view s) {
  size_t pos = s.size();
  bool punctuation = false;
  while (pos > 0) {
    const std::string_view head = s.substr(0, pos);
    size_t len = 0;
    for (std::string_view p : kFinalPunctuation) {
      if (head.ends_with(p)) {
        len = p.size();
        punctuation = true;
      }
    }
    for (std::string_view c : kClosers) {
      if (len == 0 && head.ends_with(c)) len = c.size();
    }
    if (len == 0) break;
    pos -= len;
  }
  if (!punctuation) return s.size();
  // Closers before the punctuation stay with the text they close: the
  // marker never lands inside a code span, emphasis or parentheses.
  for (size_t i = pos; i < s.size(); ++i) {
    for (std::string_view p : kFinalPunctuation) {
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

// True when `s` ends with final punctuation or a closer, where an added marker
// could still go before it.
bool EndsWithPunctuationOrCloser(std::string_view s) {
  for (std::string_view p : kFinalPunctuation)
    if (s.ends_with(p)) return true;
  for (std::string_view c : kClosers)
    if (s.ends_with(c)) return true;
  return false;
}

// Inserts `marker` at MarkerInsertPosition, after a blank unless the text
// before it is CJK or already ends in whitespace.
void InsertMarker(std::string* text, const std::string& marker) {
  const size_t at = MarkerInsertPosition(*text);
  const bool blank = at > 0 && !IsSpaceByte((*text)[at - 1]) && !AfterCjk(*text, at);
  text->insert(at, (blank ? " " : "") + marker);
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

std::string Attributor::Abandon() {
  std::string out = std::exchange(unsent_, std::string());
  out.append(pending_, std::min(streamed_, pending_.size()));
  emitted_.append(pending_, std::min(streamed_, pending_.size()));
  pending_.clear();
  streamed_ = 0;
  return out;
}

Result<std::string> Attributor::Drain(bool at_end) {
  // What this call sends collects in unsent_, so that after an error
  // Abandon still sends the sentences attributed before it.
  std::string& out = unsent_;
  // Appends pending_[from, to) to what is sent, minus its first streamed_
  // bytes, which were sent already.
  const auto send = [&](size_t from, size_t to) {
    const size_t begin = std::max(from, std::min(streamed_, to));
    out.append(pending_, begin, to - begin);
    emitted_.append(pending_, begin, to - begin);
  };
  while (true) {
    size_t ws = 0;
    while (ws < pending_.size() && IsSpaceByte(pending_[ws])) ++ws;
    send(0, ws);
    pending_.erase(0, ws);
    streamed_ -= std::min(streamed_, ws);
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
    if (!br) {
      // The sentence goes on: send what no rewrite can change.
      const size_t safe = StreamablePrefix(pending_);
      if (safe > streamed_) {
        send(0, safe);
        streamed_ = safe;
      }
      break;
    }

    const bool last = at_end && std::all_of(pending_.begin() + static_cast<std::ptrdiff_t>(br->next),
                                            pending_.end(), IsSpaceByte);
    auto rewritten = Attribute(std::string_view(pending_).substr(0, br->end), last);
    if (!rewritten.ok()) return rewritten.status();
    out += *rewritten;
    // A dropped sentence takes the blanks after it (the ones before it went
    // out with the sentence before), not a line break.
    const bool dropped = rewritten->empty() && br->end > 0 && streamed_ == 0;
    if (!dropped || !std::all_of(pending_.begin() + static_cast<std::ptrdiff_t>(br->end),
                                 pending_.begin() + static_cast<std::ptrdiff_t>(br->next), IsBlankByte))
      send(br->end, br->next);
    pending_.erase(0, br->next);
    streamed_ -= std::min(streamed_, br->next);
  }
  return std::exchange(unsent_, std::string());
}

size_t Attributor::StreamablePrefix(std::string_view partial) const {
  // Code goes out a line at a time; a short start may still be a lead-in
  // that is dropped ("Sources:") or a code fence.
  if (in_code_block_ || partial.starts_with("```") || partial.size() < kMinStreamedBytes) return 0;
  // A sentence after a fact that opens by pointing ("This is stated in ...")
  // may turn out to say only where the answer is, and be dropped.
  if (factual_sentences() > 0 && MayPointAtSources(partial)) return 0;
  // From the first '[' on, markers may be rewritten or moved.
  // Then up to the last blank before that (and within max_sentence_bytes,
  // where a sentence without an end is cut at a blank) that follows a word
  // not ending in punctuation or a closer: an added marker goes after the
  // last word, before any final punctuation, closers and blanks, and a
  // dropped marker takes the blank before it.
  size_t safe =
      std::min({partial.find('['), partial.find('\n'), partial.size() - 1, options_.max_sentence_bytes});
  while (safe > 0 && !(IsBlankByte(partial[safe]) && !IsBlankByte(partial[safe - 1]) &&
                       !EndsWithPunctuationOrCloser(partial.substr(0, safe))))
    --safe;
  return safe;
}

Result<std::string> Attributor::Attribute(std::string_view sentence, bool last) {
  // The first `streamed` bytes of the sentence went out before it ended
  // (StreamablePrefix); the rewrite below keeps them as they are.
  const size_t streamed = std::min(streamed_, sentence.size());
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
  const bool lead_in = trimmed.ends_with(':');
  const bool content = !abstains && !trimmed.starts_with('#') && !trimmed.starts_with('|') &&
                       weight >= options_.min_factual_weight;
  AttributedSentence out;
  out.factual = content && !lead_in;

  std::vector<double> scores(static_cast<size_t>(k), 0.0);
  if (k > 0 && weight > 0) {
    auto vectors = EmbedEach(embed_, {claim});
    if (!vectors.ok()) return vectors.status();
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
  // A lead-in with nothing after it ("Sources:" once the model stopped
  // before its list, or "Fonte: [7]" once its marker went) announces what
  // never came.
  if (last && lead_in && cited.empty() && weight < options_.min_factual_weight && streamed == 0)
    return std::string();
  // A sentence that only says where the answer is written, after the answer
  // (abstention.h): the citations say that better.
  if (!abstains && !lead_in && streamed == 0 && factual_sentences() > 0 && PointsAtSources(claim))
    return std::string();

  // A marker that opens the sentence ("[2] The port is 8080.") goes to its
  // end, where every other marker is.
  if (markers.size() == 1 && markers.front().begin == 0 && !cited.empty() && weight > 0) {
    const size_t len = MarkerLengthAt(text, /*at_end=*/true).value_or(0);
    if (len > 0) {
      const std::string marker = text.substr(0, len);
      size_t rest = len;
      while (rest < text.size() && IsBlankByte(text[rest])) ++rest;
      text.erase(0, rest);
      InsertMarker(&text, marker);
    }
  }
  // A lead-in to a list or code ("To create a user, run:") gets the marker of
  // a source that supports it, but is not flagged when none does: what it
  // announces follows.
  if (cited.empty() && content && !ranking.empty()) {
    const int n = ranking.front();
    InsertMarker(&text, RenderMarker({n}));
    cited.push_back(n);
    out.marker_added = true;
  }
  for (int n : cited) out.citations.push_back({n, scores[static_cast<size_t>(n - 1)]});
  out.supported = !cited.empty();
  if (text.empty()) return text;  // a lone marker that was dropped: no sentence left
  if (text.compare(0, streamed, sentence.substr(0, streamed)) != 0) {
    // Not reached (StreamablePrefix stops before anything a rewrite touches);
    // were it, the sentence stays as written, as the client has part of it.
    text = std::string(sentence);
    out.citations.clear();
    out.supported = false;
  }
  out.begin = emitted_.size() - streamed;
  emitted_.append(text, streamed);
  out.end = emitted_.size();
  sentences_.push_back(std::move(out));
  return text.substr(streamed);
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
