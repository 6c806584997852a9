#include "retrieval/support.h"

#include <utf8proc.h>

#include <algorithm>
#include <cmath>

#include "retrieval/sentences.h"

namespace ragd::retrieval {
namespace {

// Function words of English, Portuguese, Spanish, French and German (lower
// case, accents kept), and "ragd", which nearly every passage names.
const std::unordered_set<std::string_view>& Stopwords() {
  static const std::unordered_set<std::string_view> kWords = {
      // English
      "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at", "by", "for", "with",
      "from", "into", "onto", "over", "under", "about", "as", "is", "are", "was", "were", "be", "been",
      "being", "am", "do", "does", "did", "done", "have", "has", "had", "having", "it", "its", "this", "that",
      "these", "those", "there", "here", "which", "who", "whom", "whose", "what", "when", "where", "why",
      "how", "not", "no", "nor", "so", "than", "too", "very", "can", "could", "will", "would", "shall",
      "should", "may", "might", "must", "also", "only", "just", "any", "all", "each", "every", "some", "such",
      "both", "either", "neither", "more", "most", "other", "same", "own", "you", "he", "she", "we", "they",
      "me", "him", "her", "us", "them", "my", "your", "his", "our", "their", "one", "yes", "per", "via", "up",
      "out", "off", "again", "once", "don", "isn", "aren", "doesn", "didn", "won", "eg", "ie", "etc", "an",
      "ragd",
      // Portuguese
      "os", "as", "um", "uma", "uns", "umas", "de", "do", "da", "dos", "das", "em", "na", "nos", "nas", "por",
      "pelo", "pela", "pelos", "pelas", "para", "com", "sem", "sob", "sobre", "entre", "ou", "mas", "se",
      "que", "quem", "qual", "quais", "quando", "onde", "como", "porque", "porquê", "não", "sim", "é", "são",
      "foi", "foram", "ser", "estar", "está", "estão", "esta", "este", "isto", "esse", "essa", "isso",
      "aquele", "aquela", "ao", "aos", "à", "às", "seu", "sua", "seus", "suas", "ele", "ela", "eles", "elas",
      "eu", "tu", "você", "vocês", "nós", "lhe", "lhes", "te", "também", "já", "mais", "muito", "muitos",
      "pode", "podem", "deve", "devem", "cada", "todo", "toda", "todos", "todas", "há", "tem", "têm", "ter",
      "mesmo", "depois", "antes", "então", "assim", "até",
      // Spanish
      "el", "la", "los", "las", "una", "unos", "unas", "del", "en", "con", "sin", "y", "pero", "si", "quien",
      "cual", "cuales", "cuando", "donde", "sí", "es", "son", "fue", "está", "están", "esto", "ese", "eso",
      "al", "lo", "le", "les", "su", "sus", "él", "ellos", "ellas", "yo", "usted", "ustedes", "nosotros",
      "ya", "más", "muy", "puede", "pueden", "debe", "deben", "hay", "tiene", "tienen", "después", "entonces",
      "así", "hasta",
      // French
      "un", "une", "des", "du", "dans", "pour", "avec", "sans", "sur", "sous", "et", "qu", "qui", "quoi",
      "quel", "quelle", "quels", "quelles", "quand", "où", "comment", "pourquoi", "ne", "pas", "non", "oui",
      "est", "sont", "été", "être", "avoir", "ont", "ce", "cet", "cette", "ces", "ça", "il", "elle", "ils",
      "elles", "je", "vous", "nous", "on", "sa", "ses", "leur", "leurs", "au", "aux", "plus", "très", "peut",
      "peuvent", "doit", "doivent", "chaque", "tout", "toute", "tous", "toutes", "aussi", "déjà", "même",
      "après", "avant", "alors", "ainsi", "jusqu",
      // German
      "der", "die", "das", "den", "dem", "ein", "eine", "einen", "einem", "einer", "eines", "und", "oder",
      "aber", "wenn", "dann", "als", "wie", "wer", "was", "wo", "warum", "wann", "nicht", "kein", "keine",
      "ja", "nein", "ist", "sind", "war", "waren", "sein", "werden", "wird", "wurde", "hat", "haben", "mit",
      "ohne", "von", "zu", "zum", "zur", "im", "an", "am", "auf", "aus", "bei", "für", "über", "unter",
      "nach", "vor", "durch", "um", "es", "er", "sie", "wir", "ihr", "ich", "du", "man", "sich", "seine",
      "ihre", "ihren", "auch", "schon", "noch", "nur", "mehr", "sehr", "kann", "können", "muss", "müssen",
      "jeder", "jede", "jedes", "alle", "alles", "dies", "diese", "dieser", "dieses", "da", "dass", "bis",
      "nichts", "dazu", "darüber", "hierzu", "etwas", "hier", "dort"};
  return kWords;
}

bool IsCjk(int32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
         (cp >= 0xF900 && cp <= 0xFAFF);
}

bool IsTokenChar(int32_t cp) {
  if (cp == '_') return true;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ND:
      return true;
    default:
      return false;
  }
}

bool IsDigitCp(int32_t cp) { return cp >= '0' && cp <= '9'; }
bool IsGroupSpace(int32_t cp) { return cp == ' ' || cp == 0x00A0 || cp == 0x202F; }

void Append(std::string* out, int32_t cp) {
  utf8proc_uint8_t buf[4];
  utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
  out->append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// The text as code points (invalid bytes become U+FFFD, a separator).
std::vector<int32_t> Decode(std::string_view text) {
  std::vector<int32_t> cps;
  cps.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    if (n <= 0) {
      cp = 0xFFFD;
      n = 1;
    }
    cps.push_back(cp);
    pos += static_cast<size_t>(n);
  }
  return cps;
}

struct RawToken {
  std::string text;
  bool digits_only = true;
  bool letters = false;
  bool digits = false;
  bool joiner = false;  // '_' or an inner '-'
  size_t code_points = 0;
};

void Finish(RawToken* raw, std::vector<ContentToken>* out) {
  if (raw->code_points == 0) return;
  ContentToken t;
  t.text = std::move(raw->text);
  if (raw->digits_only) {
    t.kind = TokenKind::kNumber;
  } else if (raw->joiner || (raw->letters && raw->digits)) {
    t.kind = TokenKind::kIdentifier;
  } else if (raw->code_points < 2 || Stopwords().count(t.text) > 0) {
    *raw = RawToken();
    return;
  }
  out->push_back(std::move(t));
  *raw = RawToken();
}

}  // namespace

std::vector<ContentToken> ContentTokens(std::string_view text) {
  const std::vector<int32_t> cps = Decode(text);
  std::vector<ContentToken> out;
  RawToken raw;
  size_t group = 0;  // digits since the last separator of the number being read
  auto at = [&](size_t i) -> int32_t { return i < cps.size() ? cps[i] : 0; };
  for (size_t i = 0; i < cps.size(); ++i) {
    const int32_t cp = cps[i];
    if (IsCjk(cp)) {
      Finish(&raw, &out);
      ContentToken t;
      Append(&t.text, cp);
      out.push_back(std::move(t));
      continue;
    }
    if (IsTokenChar(cp)) {
      const bool digit = IsDigitCp(cp);
      raw.digits_only = raw.digits_only && digit;
      raw.digits = raw.digits || digit;
      raw.letters = raw.letters || !digit;
      raw.joiner = raw.joiner || cp == '_';
      group = digit ? group + 1 : 0;
      Append(&raw.text, utf8proc_tolower(cp));
      ++raw.code_points;
      continue;
    }
    const bool in_number = raw.code_points > 0 && raw.digits_only;
    // "3.14", "200,000", "1.000,50": separators inside a number are dropped.
    if (in_number && (cp == '.' || cp == ',') && IsDigitCp(at(i + 1))) {
      group = 0;
      continue;
    }
    // "200 000": a group of exactly three digits after a space continues it.
    if (in_number && group <= 3 && IsGroupSpace(cp) && IsDigitCp(at(i + 1)) && IsDigitCp(at(i + 2)) &&
        IsDigitCp(at(i + 3)) && !IsDigitCp(at(i + 4))) {
      group = 0;
      continue;
    }
    // "all-MiniLM-L6-v2", "rk-": an inner hyphen joins an identifier.
    if (cp == '-' && raw.code_points > 0 && !raw.digits_only && IsTokenChar(at(i + 1))) {
      raw.joiner = true;
      raw.text.push_back('-');
      raw.digits_only = false;
      continue;
    }
    group = 0;
    Finish(&raw, &out);
  }
  Finish(&raw, &out);
  return out;
}

double TokenWeight(TokenKind kind) {
  switch (kind) {
    case TokenKind::kNumber:
      return 3;
    case TokenKind::kIdentifier:
      return 2;
    case TokenKind::kWord:
      return 1;
  }
  return 1;
}

double ContentWeight(const std::vector<ContentToken>& tokens) {
  std::unordered_set<std::string> seen;
  double sum = 0;
  for (const ContentToken& t : tokens) {
    if (seen.insert(t.text).second) sum += TokenWeight(t.kind);
  }
  return sum;
}

LexicalIndex::LexicalIndex(std::string_view text) {
  for (ContentToken& t : ContentTokens(text)) {
    if (t.kind == TokenKind::kWord && t.text.size() >= 5 && exact_.count(t.text) == 0)
      long_words_.push_back(t.text);
    exact_.insert(std::move(t.text));
  }
}

bool LexicalIndex::Contains(const ContentToken& token) const {
  if (exact_.count(token.text) > 0) return true;
  if (token.kind != TokenKind::kWord || token.text.size() < 5) return false;
  for (const std::string& w : long_words_) {
    const size_t shorter = std::min(w.size(), token.text.size());
    const size_t need = std::max<size_t>(5, (2 * shorter + 2) / 3);
    if (shorter < need) continue;
    if (std::equal(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(need), token.text.begin())) return true;
  }
  return false;
}

double LexicalSupport(const std::vector<ContentToken>& sentence, const LexicalIndex& passage) {
  std::unordered_set<std::string> seen;
  double total = 0, found = 0;
  for (const ContentToken& t : sentence) {
    if (!seen.insert(t.text).second) continue;
    total += TokenWeight(t.kind);
    if (passage.Contains(t)) found += TokenWeight(t.kind);
  }
  return total > 0 ? found / total : 0;
}

Result<std::vector<std::vector<float>>> EmbedEach(const EmbedTextsFn& embed,
                                                  const std::vector<std::string>& texts) {
  auto vectors = embed(texts);
  if (vectors.ok() && vectors->size() != texts.size())
    return Status::Internal("embedding function returned " + std::to_string(vectors->size()) +
                            " vectors for " + std::to_string(texts.size()) + " texts");
  return vectors;
}

Result<std::vector<PassageEvidence>> PreparePassages(const std::vector<std::string>& passages,
                                                     const EmbedTextsFn& embed) {
  std::vector<std::string> texts;
  std::vector<size_t> owner;  // passage index of each text
  for (size_t i = 0; i < passages.size(); ++i) {
    texts.push_back(passages[i]);
    owner.push_back(i);
    std::vector<std::string_view> sentences = SplitSentences(passages[i]);
    if (sentences.size() < 2) continue;
    for (std::string_view s : sentences) {
      if (ContentWeight(ContentTokens(s)) < 2) continue;  // fences, table rules, lone words
      texts.emplace_back(s);
      owner.push_back(i);
    }
  }
  std::vector<PassageEvidence> out(passages.size());
  for (size_t i = 0; i < passages.size(); ++i) out[i].lexical = LexicalIndex(passages[i]);
  if (texts.empty()) return out;
  auto vectors = EmbedEach(embed, texts);
  if (!vectors.ok()) return vectors.status();
  for (size_t k = 0; k < texts.size(); ++k) out[owner[k]].vectors.push_back(std::move((*vectors)[k]));
  return out;
}

std::vector<SupportFeatures> MeasureSupport(const std::vector<ContentToken>& sentence_tokens,
                                            const std::vector<float>& sentence_vector,
                                            const std::vector<const PassageEvidence*>& sources) {
  std::vector<SupportFeatures> out(sources.size());
  double best_cosine = -1, best_lexical = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    SupportFeatures& f = out[i];
    const PassageEvidence& p = *sources[i];
    f.cosine = p.vectors.empty() ? 0 : -1;
    for (const std::vector<float>& v : p.vectors) f.cosine = std::max(f.cosine, Cosine(sentence_vector, v));
    f.lexical = LexicalSupport(sentence_tokens, p.lexical);
    for (const ContentToken& t : sentence_tokens) {
      if (t.kind == TokenKind::kNumber && !p.lexical.Contains(t)) f.number_missing = 1;
    }
    best_cosine = std::max(best_cosine, f.cosine);
    best_lexical = std::max(best_lexical, f.lexical);
  }
  for (SupportFeatures& f : out) {
    f.cosine_gap = f.cosine - best_cosine;
    f.lexical_gap = f.lexical - best_lexical;
  }
  return out;
}

double SupportScore(const SupportFeatures& f, const SupportModel& m) {
  const double z = m.bias + m.cosine * f.cosine + m.lexical * f.lexical + m.cosine_gap * f.cosine_gap +
                   m.lexical_gap * f.lexical_gap + m.number_missing * f.number_missing;
  return 1.0 / (1.0 + std::exp(-z));
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return 0;
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0;
  return dot / std::sqrt(na * nb);
}

}  // namespace ragd::retrieval
