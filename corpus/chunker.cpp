#include "corpus/chunker.h"

#include <algorithm>

namespace ragd::corpus {
namespace {

// A stretch of text under one heading chain: [start, end).
struct Section {
  size_t start;
  size_t end;
  std::string headings;
};

// Smallest piece the packer handles: a word (or a slice of an overlong word),
// with the strength of the break that follows it.
enum BreakLevel : int { kInsideWord = 0, kSpace = 1, kSentence = 2, kParagraph = 3 };
struct Unit {
  size_t start;
  size_t end;
  int tokens;
  int break_after;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Level (1-6) and text of an ATX heading line, level 0 when `line` is none.
int ParseHeading(std::string_view line, std::string* text) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  size_t hashes = 0;
  while (i + hashes < line.size() && line[i + hashes] == '#') ++hashes;
  if (hashes == 0 || hashes > 6) return 0;
  i += hashes;
  if (i < line.size() && line[i] != ' ' && line[i] != '\t') return 0;
  std::string_view rest = line.substr(i);
  while (!rest.empty() && IsSpace(rest.back())) rest.remove_suffix(1);
  // A closing sequence of '#' preceded by a space is not part of the text.
  size_t close = rest.size();
  while (close > 0 && rest[close - 1] == '#') --close;
  if (close < rest.size() && (close == 0 || rest[close - 1] == ' ' || rest[close - 1] == '\t'))
    rest = rest.substr(0, close);
  while (!rest.empty() && IsSpace(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && IsSpace(rest.back())) rest.remove_suffix(1);
  *text = std::string(rest);
  return static_cast<int>(hashes);
}

bool IsFence(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  line.remove_prefix(i);
  return line.starts_with("```") || line.starts_with("~~~");
}

bool IsBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return IsSpace(c); });
}

std::vector<Section> SplitSections(std::string_view text, bool markdown_headings) {
  std::vector<Section> sections{{0, text.size(), ""}};
  if (!markdown_headings) return sections;
  std::vector<std::pair<int, std::string>> stack;  // open headings: level, text
  bool in_fence = false;
  for (size_t line_start = 0; line_start < text.size();) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string_view line = text.substr(line_start, line_end - line_start);
    std::string heading;
    int level = 0;
    if (IsFence(line))
      in_fence = !in_fence;
    else if (!in_fence)
      level = ParseHeading(line, &heading);
    if (level > 0) {
      while (!stack.empty() && stack.back().first >= level) stack.pop_back();
      stack.emplace_back(level, heading);
      std::string chain;
      for (const auto& [l, h] : stack) {
        if (!chain.empty()) chain += " > ";
        chain += h;
      }
      sections.back().end = line_start;
      sections.push_back({line_start, text.size(), std::move(chain)});
    }
    line_start = line_end + 1;
  }
  // Drop sections that hold nothing, and fold a heading with no body of its
  // own into the section that follows it (that section's chain names it).
  std::vector<Section> out;
  for (size_t i = 0; i < sections.size(); ++i) {
    Section s = sections[i];
    if (IsBlank(text.substr(s.start, s.end - s.start))) continue;
    if (i + 1 < sections.size() && i > 0) {
      const size_t body = text.find('\n', s.start);
      if (body == std::string_view::npos || body >= s.end || IsBlank(text.substr(body, s.end - body))) {
        sections[i + 1].start = s.start;
        continue;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool EndsSentence(std::string_view word) {
  while (!word.empty() &&
         (word.back() == '"' || word.back() == '\'' || word.back() == ')' || word.back() == ']')) {
    word.remove_suffix(1);
  }
  if (word.empty()) return false;
  const char c = word.back();
  return c == '.' || c == '!' || c == '?' || c == ':' || c == ';' || word.ends_with("\xE3\x80\x82");
}

// Cuts [start, end) (one word) into pieces of at most `target` tokens at UTF-8
// character boundaries. The cut is found by galloping (probe lengths double
// from `target` bytes until one no longer fits) and then bisecting between the
// last fit and the first misfit, so each piece costs counts over a few times
// its own length: a bisection over the rest of the word would make a word of
// n bytes (CJK text, minified code) cost n^2 / target.
void SplitLongWord(std::string_view text, size_t start, size_t end, int target, const TokenCounter& count,
                   std::vector<Unit>* units) {
  auto fits = [&](size_t from, size_t to) { return count(text.substr(from, to - from)) <= target; };
  while (start < end) {
    size_t lo = start + 1;  // a cut that fits, or the smallest cut there is
    size_t hi = end;        // every cut above hi is known not to fit
    for (size_t step = static_cast<size_t>(target);; step *= 2) {
      const size_t probe = start + step;
      if (probe >= end) break;
      if (!fits(start, probe)) {
        hi = probe - 1;
        break;
      }
      lo = probe;
    }
    while (lo < hi) {  // largest fitting cut in [lo, hi]
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (fits(start, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    size_t cut = lo;
    while (cut < end && cut > start + 1 && IsContinuationByte(text[cut])) --cut;
    while (cut < end && IsContinuationByte(text[cut])) ++cut;  // one character alone is over target
    units->push_back({start, cut, count(text.substr(start, cut - start)), kInsideWord});
    start = cut;
  }
}

std::vector<Unit> SplitUnits(std::string_view text, const Section& s, int target, const TokenCounter& count) {
  std::vector<Unit> units;
  size_t i = s.start;
  while (i < s.end) {
    while (i < s.end && IsSpace(text[i])) ++i;
    if (i >= s.end) break;
    const size_t word_start = i;
    while (i < s.end && !IsSpace(text[i])) ++i;
    const std::string_view word = text.substr(word_start, i - word_start);
    const int tokens = count(word);
    if (tokens <= target)
      units.push_back({word_start, i, tokens, kSpace});
    else
      SplitLongWord(text, word_start, i, target, count, &units);
    size_t newlines = 0;
    size_t j = i;
    while (j < s.end && IsSpace(text[j])) newlines += text[j++] == '\n';
    int level = newlines >= 2 ? kParagraph : (newlines == 1 || EndsSentence(word)) ? kSentence : kSpace;
    units.back().break_after = level;
  }
  return units;
}

// The offset at which the line holding `pos` starts.
size_t LineStart(std::string_view text, size_t pos) {
  if (pos == 0) return 0;
  const size_t nl = text.rfind('\n', pos - 1);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

// Whether only blanks stand between the start of its line and `pos`.
bool StartsLine(std::string_view text, size_t pos) {
  const size_t line = LineStart(text, pos);
  return IsBlank(text.substr(line, pos - line));
}

// Whether `pos` is inside a Markdown table row ("| a | b |"), past its start.
bool InTableRowAfterItsStart(std::string_view text, size_t pos) {
  size_t i = LineStart(text, pos);
  while (i < pos && (text[i] == ' ' || text[i] == '\t')) ++i;
  return i < pos && text[i] == '|';
}

}  // namespace

Result<std::vector<TextChunk>> ChunkText(std::string_view text, const TokenCounter& count,
                                         const ChunkerOptions& options) {
  if (!count) return Status::InvalidArgument("chunker needs a token counter");
  if (options.target_tokens < 1) return Status::InvalidArgument("chunker target_tokens must be >= 1");
  if (options.overlap_tokens < 0 || options.overlap_tokens >= options.target_tokens) {
    return Status::InvalidArgument("chunker overlap_tokens must be in [0, target_tokens)");
  }
  const int target = options.target_tokens;
  const int overlap = options.overlap_tokens;
  std::vector<TextChunk> chunks;
  for (const Section& section : SplitSections(text, options.markdown_headings)) {
    const std::vector<Unit> u = SplitUnits(text, section, target, count);
    const size_t n = u.size();
    size_t a = 0;
    size_t must_reach = 0;  // the first unit no earlier chunk holds
    while (a < n) {
      // Longest run of units from `a` whose summed counts fit the target.
      size_t last = a;
      int sum = u[a].tokens;
      while (last + 1 < n && sum + u[last + 1].tokens <= target) sum += u[++last].tokens;
      size_t b = last;
      if (last + 1 < n) {
        // Prefer the strongest break that still leaves the chunk half full.
        int best_level = -1, prefix = 0;
        for (size_t k = a; k <= last; ++k) {
          prefix += u[k].tokens;
          if (prefix * 2 >= target && u[k].break_after >= best_level) {
            best_level = u[k].break_after;
            b = k;
          }
        }
      }
      // Counts of pieces need not add up exactly; trust only the real count.
      int tokens = count(text.substr(u[a].start, u[b].end - u[a].start));
      while (tokens > target && b > a) {
        --b;
        tokens = count(text.substr(u[a].start, u[b].end - u[a].start));
      }
      if (b < must_reach) {
        // The overlap left no room for new text (counts are not additive):
        // start again without it.
        a = must_reach;
        continue;
      }
      must_reach = b + 1;
      TextChunk chunk;
      chunk.start = u[a].start;
      chunk.end = u[b].end;
      chunk.text = std::string(text.substr(chunk.start, chunk.end - chunk.start));
      chunk.token_count = tokens;
      chunk.heading_context = section.headings;
      chunks.push_back(std::move(chunk));
      if (b + 1 >= n) break;
      // Next start: back over about `overlap` tokens, at a sentence start if
      // one gives at least half of that; it must leave room for new text.
      size_t next = b + 1;
      int tail = 0;
      while (next - 1 > a && tail + u[next - 1].tokens <= overlap) tail += u[--next].tokens;
      int from_k = tail;
      for (size_t k = next; k <= b; from_k -= u[k++].tokens) {
        if (u[k - 1].break_after >= kSentence) {
          if (from_k * 2 >= overlap) {
            tail = from_k;
            next = k;
          }
          break;
        }
      }
      // A Markdown table row is not cut: the overlap starts at a row, or
      // there is none. Begun mid-row, the next chunk opened with a stray
      // "(32 MiB) | largest upload, ..." that belongs to another setting.
      if (next <= b && InTableRowAfterItsStart(text, u[next].start)) {
        while (next <= b && !StartsLine(text, u[next].start)) tail -= u[next++].tokens;
      }
      while (next <= b && tail + u[b + 1].tokens > target) tail -= u[next++].tokens;
      a = next;
    }
  }
  return chunks;
}

}  // namespace ragd::corpus
