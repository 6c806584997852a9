#include "retrieval/excerpt.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "retrieval/sentences.h"
#include "retrieval/support.h"

namespace ragd::retrieval {
namespace {

enum class LineKind { kBlank, kText, kListItem, kOwnLine, kFence };

LineKind KindOf(std::string_view line) {
  const size_t at = line.find_first_not_of(" \t");
  if (at == std::string_view::npos) return LineKind::kBlank;
  const std::string_view s = line.substr(at);
  if (s.starts_with("```")) return LineKind::kFence;
  if (s[0] == '#' || s[0] == '|' || s[0] == '>') return LineKind::kOwnLine;
  if (s.size() > 1 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ') return LineKind::kListItem;
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  if (digits > 0 && digits + 1 < s.size() && (s[digits] == '.' || s[digits] == ')') && s[digits + 1] == ' ')
    return LineKind::kListItem;
  return LineKind::kText;
}

struct Unit {
  std::string text;
  bool continues = false;  // the next unit is the next sentence of the same paragraph
};

// The passage's units in order (see excerpt.h).
std::vector<Unit> Units(std::string_view passage) {
  std::vector<Unit> units;
  std::string paragraph;  // wrapped lines of a paragraph or list item, joined
  const auto flush = [&] {
    if (paragraph.empty()) return;
    const bool item = KindOf(paragraph) == LineKind::kListItem;
    std::vector<std::string_view> sentences =
        item ? std::vector<std::string_view>{paragraph} : SplitSentences(paragraph);
    for (std::string_view s : sentences) units.push_back({std::string(s), true});
    if (!units.empty()) units.back().continues = false;
    paragraph.clear();
  };
  bool in_code = false;
  size_t pos = 0;
  while (pos <= passage.size()) {
    size_t nl = passage.find('\n', pos);
    if (nl == std::string_view::npos) nl = passage.size();
    const std::string_view line = passage.substr(pos, nl - pos);
    pos = nl + 1;
    const LineKind kind = KindOf(line);
    if (in_code || kind == LineKind::kFence) {
      // A code block is one unit, fences included, so that none is left open.
      if (!in_code) {
        flush();
        units.push_back({});
      } else {
        units.back().text += '\n';
      }
      units.back().text += line;
      in_code = !in_code || kind != LineKind::kFence;  // a fence opens a block or closes the open one
      continue;
    }
    if (kind == LineKind::kBlank || kind == LineKind::kOwnLine || kind == LineKind::kListItem) flush();
    if (kind == LineKind::kOwnLine) units.push_back({std::string(line), false});
    if (kind == LineKind::kText || kind == LineKind::kListItem) {
      const size_t at = line.find_first_not_of(" \t");
      if (!paragraph.empty()) paragraph += ' ';
      paragraph.append(kind == LineKind::kListItem ? line : line.substr(at));
    }
  }
  flush();
  return units;
}

}  // namespace

std::string QueryExcerpt(std::string_view passage, std::string_view query, size_t max_bytes) {
  if (passage.size() <= max_bytes) return std::string(passage);
  const std::vector<Unit> units = Units(passage);
  if (units.empty()) return {};

  // The weighted share of the query's distinct content tokens that a unit
  // holds, which for one query ranks units as the weight they hold does.
  const std::vector<ContentToken> wanted = ContentTokens(query);
  std::vector<double> score(units.size(), 0);
  for (size_t i = 0; i < units.size(); ++i) score[i] = LexicalSupport(wanted, LexicalIndex(units[i].text));

  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  const bool any = score[order.front()] > 0;
  std::vector<bool> kept(units.size(), false);
  size_t used = 0;
  for (size_t i : order) {
    if (any && score[i] <= 0) break;
    const size_t size = units[i].text.size() + 1;
    if (used > 0 && used + size > max_bytes) continue;
    kept[i] = true;
    used += size;
  }

  std::string out;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!kept[i]) {
      if (i == 0 || kept[i - 1]) out += out.empty() ? "…" : "\n…";
      continue;
    }
    if (!out.empty()) out += i > 0 && kept[i - 1] && units[i - 1].continues ? " " : "\n";
    out += units[i].text;
  }
  return out;
}

}  // namespace ragd::retrieval
