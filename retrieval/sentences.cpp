#include "retrieval/sentences.h"

#include <utf8proc.h>

#include <algorithm>
#include <string>

#include "common/text.h"

namespace ragd::retrieval {
namespace {

// Words that a '.' follows without ending the sentence, lower-cased, without
// their final '.'. Abbreviations that often end a sentence ("etc.", "usw.")
// are left out: for them the next word's case decides.
constexpr std::string_view kAbbreviations[] = {
    // English
    "e.g", "i.e", "mr", "mrs", "dr", "prof", "st", "vs", "cf", "approx", "fig", "jr",
    // Portuguese and Spanish
    "sr", "sra", "srs", "srta", "dra", "p.ex", "p.ej", "ex", "ej", "pág", "págs", "obs", "ud", "uds", "n.º",
    "nº", "vol", "cap",
    // French
    "mme", "mlle", "env", "c.-à-d", "c.à.d", "p", "pp",
    // German ("z. B.", "d. h." and "u. a." also with a blank)
    "z", "d", "u", "z.b", "d.h", "u.a", "bzw", "ca", "vgl", "nr", "evtl", "ggf", "hr", "inkl"};

// A decoded code point and its length in bytes; length 0 when the text ends
// inside the character (more bytes may follow).
struct CodePoint {
  int32_t cp = 0;
  size_t len = 0;
};

CodePoint DecodeAt(std::string_view text, size_t pos) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos);
  const auto left = static_cast<utf8proc_ssize_t>(text.size() - pos);
  utf8proc_int32_t cp = 0;
  utf8proc_ssize_t n = utf8proc_iterate(bytes, left, &cp);
  if (n > 0) return {cp, static_cast<size_t>(n)};
  // Invalid: an incomplete sequence at the end may still be completed.
  if (CompleteUtf8Prefix(text.substr(pos)) == 0) return {0, 0};
  return {0xFFFD, 1};
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsTerminal(int32_t cp) { return cp == '.' || cp == '!' || cp == '?' || cp == 0x2026; }
bool IsPeriodLike(int32_t cp) { return cp == '.' || cp == 0x2026; }
bool IsCjkStop(int32_t cp) { return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F; }
bool IsCloser(int32_t cp) {
  switch (cp) {
    case '"':
    case '\'':
    case ')':
    case '*':
    case '_':
    case '`':
    case 0x201D:
    case 0x2019:
    case 0x00BB:
    case 0x300D:
    case 0x300F:
    case 0xFF09:
      return true;
    default:
      return false;
  }
}
bool IsLower(int32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_LL;
}
bool IsUpper(int32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_LU;
}

// Past the closing characters from `pos`; `incomplete` when the text ends inside one.
size_t SkipClosers(std::string_view text, size_t pos, bool* incomplete) {
  while (pos < text.size()) {
    CodePoint c = DecodeAt(text, pos);
    if (c.len == 0) {
      *incomplete = true;
      return pos;
    }
    if (!IsCloser(c.cp)) break;
    pos += c.len;
  }
  return pos;
}

// Past a French closing guillemet set off by a blank ("Arrêtez. »") and the
// closers after it; `pos` unchanged when there is none.
size_t SkipSpacedGuillemet(std::string_view text, size_t pos, bool* incomplete) {
  size_t q = pos;
  while (q < text.size()) {
    CodePoint c = DecodeAt(text, q);
    if (c.len == 0) {
      *incomplete = true;
      return pos;
    }
    if (c.cp == 0x00BB) return SkipClosers(text, q + c.len, incomplete);
    if (c.cp != ' ' && c.cp != 0x00A0 && c.cp != 0x202F) return pos;
    q += c.len;
  }
  *incomplete = true;  // blanks up to the end: a guillemet may follow
  return pos;
}

size_t TrimEnd(std::string_view text, size_t end) {
  while (end > 0 && IsSpace(text[end - 1])) --end;
  return end;
}

size_t SkipSpaces(std::string_view text, size_t pos) {
  while (pos < text.size() && IsSpace(text[pos])) ++pos;
  return pos;
}

// True when the single '.' at `dot` follows an abbreviation, an initial or
// the number of a list item, so that it does not end the sentence.
bool DotAfterNonFinalWord(std::string_view text, size_t dot) {
  size_t begin = dot;
  while (begin > 0 && !IsSpace(text[begin - 1])) --begin;
  std::string_view word = text.substr(begin, dot - begin);
  while (!word.empty() && std::string_view("(\"'[").find(word.front()) != std::string_view::npos)
    word.remove_prefix(1);
  for (std::string_view opener : {"\u00BF", "\u00A1", "\u00AB", "\u201C"}) {
    if (word.substr(0, opener.size()) == opener) word.remove_prefix(opener.size());
  }
  if (word.empty()) return false;
  if (begin == 0) {
    bool digits = true;
    for (char c : word) digits = digits && IsDigit(c);
    if (digits) return true;  // "1. Install the packages"
  }
  CodePoint first = DecodeAt(word, 0);
  if (first.len == word.size() && IsUpper(first.cp)) return true;  // an initial
  const std::string lower = AsciiLower(word);
  for (std::string_view a : kAbbreviations) {
    if (lower == a) return true;
  }
  return false;
}

}  // namespace

std::optional<size_t> MarkerLengthAt(std::string_view text, bool at_end) {
  constexpr size_t kLongestMarker = 40;
  if (text.empty()) return at_end ? std::optional<size_t>(0) : std::nullopt;
  if (text[0] != '[') return 0;
  size_t i = 1;
  while (true) {
    size_t digits = 0;
    while (i < text.size() && IsDigit(text[i])) ++i, ++digits;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) return at_end || i > kLongestMarker ? std::optional<size_t>(0) : std::nullopt;
    if (digits == 0) return 0;
    if (text[i] == ']') return i + 1;
    if (text[i] != ',') return 0;
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
  }
}

std::vector<CitationMarker> FindCitationMarkers(std::string_view text) {
  std::vector<CitationMarker> out;
  for (size_t i = text.find('['); i != std::string_view::npos; i = text.find('[', i + 1)) {
    const size_t len = *MarkerLengthAt(text.substr(i), /*at_end=*/true);
    if (len == 0) continue;
    CitationMarker m{i, i + len, {}};
    int value = 0;
    bool in_number = false;
    for (size_t k = i + 1; k < i + len; ++k) {
      if (IsDigit(text[k])) {
        value = value > 9999 ? 10000 : value * 10 + (text[k] - '0');
        in_number = true;
      } else if (in_number) {
        m.numbers.push_back(value);
        value = 0;
        in_number = false;
      }
    }
    out.push_back(std::move(m));
    i = i + len - 1;
  }
  return out;
}

std::optional<SentenceBreak> FindSentenceBreak(std::string_view text, bool at_end) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    if (text[i] == '\n') return SentenceBreak{TrimEnd(text, i), SkipSpaces(text, i)};
    CodePoint c = DecodeAt(text, i);
    if (c.len == 0) {
      if (!at_end) return std::nullopt;
      break;
    }
    const bool cjk = IsCjkStop(c.cp);
    if (!cjk && !IsTerminal(c.cp)) {
      i += c.len;
      continue;
    }
    // A run of terminal punctuation, then closers.
    size_t j = i;
    bool period_only = true;
    int periods = 0;
    while (j < n) {
      CodePoint t = DecodeAt(text, j);
      if (t.len == 0 || !(IsTerminal(t.cp) || IsCjkStop(t.cp))) break;
      period_only = period_only && IsPeriodLike(t.cp);
      periods += t.cp == '.' ? 1 : 2;
      j += t.len;
    }
    bool incomplete = false;
    size_t p = SkipClosers(text, j, &incomplete);
    if (!incomplete) p = SkipSpacedGuillemet(text, p, &incomplete);
    if (!at_end && (incomplete || p == n)) return std::nullopt;
    if (p == n) return SentenceBreak{p, n};
    if (!cjk && !IsSpace(text[p]) && text[p] != '[') {  // "3.14", "e.g.,", "ragd.jsonc"
      i = p;
      continue;
    }
    if (period_only && periods == 1 && DotAfterNonFinalWord(text, i)) {
      i = p;
      continue;
    }
    // Citation markers on the same line belong to this sentence.
    size_t end = p;
    size_t q = p;
    while (true) {
      while (q < n && IsBlank(text[q])) ++q;
      if (q == n) {
        if (!at_end) return std::nullopt;
        return SentenceBreak{end, n};
      }
      if (text[q] == '\n') return SentenceBreak{end, SkipSpaces(text, q)};
      if (text[q] != '[') break;
      std::optional<size_t> m = MarkerLengthAt(text.substr(q), at_end);
      if (!m) return std::nullopt;
      if (*m == 0) break;
      q += *m;
      end = q;
    }
    if (period_only && !cjk) {
      CodePoint next = DecodeAt(text, q);
      if (next.len == 0 && !at_end) return std::nullopt;
      if (next.len > 0 && IsLower(next.cp)) {  // "approx. three", "... and then"
        i = p;
        continue;
      }
    }
    if (cjk || IsSpace(text[p]) || end > p) return SentenceBreak{end, q};
    i = p;  // '.' glued to '[' that is no marker
  }
  if (!at_end) return std::nullopt;
  return SentenceBreak{TrimEnd(text, n), n};
}

std::vector<std::string_view> SplitSentences(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = SkipSpaces(text, 0);
  while (pos < text.size()) {
    SentenceBreak b = *FindSentenceBreak(text.substr(pos), /*at_end=*/true);
    if (b.end > 0) out.push_back(text.substr(pos, b.end));
    pos = SkipSpaces(text, pos + std::max<size_t>(b.next, 1));
  }
  return out;
}

}  // namespace ragd::retrieval
