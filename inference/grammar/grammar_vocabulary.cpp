// The vocabulary as a byte trie of token texts, walked depth first with one
// matcher state per depth: a subtree is skipped as soon as its prefix cannot
// continue the JSON, so a mask costs what the still-valid prefixes cost.
#include <algorithm>

#include "inference/grammar/json_grammar.h"

namespace ragd::inference {

namespace {

// Whether `text` is printable string content made of whole UTF-8 characters
// (what JsonMatcher accepts in a string body and leaves it there).
bool IsPlainText(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == '"' || c == '\\') return false;  // would end the string or escape
  JsonMatcher m(JsonGrammar::AnyObject());
  return m.Feed("{\"") && m.Feed(text) && m.InStringText();  // whole UTF-8 characters
}

}  // namespace

GrammarVocabulary::GrammarVocabulary(const Tokenizer& tokenizer) {
  const int n = tokenizer.vocab_size();
  texts_.resize(n);
  end_of_generation_.assign(n, 0);
  plain_text_.assign(n, 0);
  for (TokenId id = 0; id < n; ++id) {
    if (tokenizer.IsEndOfGeneration(id)) end_of_generation_[id] = 1;
    if (tokenizer.IsControl(id)) continue;
    auto bytes = tokenizer.TokenBytes(id);
    if (!bytes.ok() || bytes->empty()) continue;
    texts_[id] = std::move(bytes).value();
    all_.sorted.push_back(id);
    plain_text_[id] = !end_of_generation_[id] && IsPlainText(texts_[id]);
    if (!plain_text_[id]) other_.sorted.push_back(id);
    longest_ = std::max(longest_, texts_[id].size());
  }
  BuildTrie(&all_);
  BuildTrie(&other_);
}

void GrammarVocabulary::BuildTrie(Trie* trie) {
  std::sort(trie->sorted.begin(), trie->sorted.end(),
            [this](TokenId a, TokenId b) { return texts_[a] < texts_[b]; });
  trie->nodes.reserve(trie->sorted.size() * 2);
  Build(trie, 0, static_cast<uint32_t>(trie->sorted.size()), 0);
}

// The node for the tokens sorted[lo, hi), which share their first `depth`
// bytes; those exactly `depth` long end here (they sort first).
uint32_t GrammarVocabulary::Build(Trie* trie, uint32_t lo, uint32_t hi, size_t depth) {
  const std::vector<TokenId>& sorted = trie->sorted;
  const auto index = static_cast<uint32_t>(trie->nodes.size());
  trie->nodes.emplace_back();
  uint32_t i = lo;
  while (i < hi && texts_[sorted[i]].size() == depth) ++i;
  trie->nodes[index].first_token = lo;
  trie->nodes[index].tokens = i - lo;
  // Edges first (contiguous), then each child's subtree.
  std::vector<std::pair<uint32_t, uint32_t>> groups;
  while (i < hi) {
    const char b = texts_[sorted[i]][depth];
    uint32_t j = i + 1;
    while (j < hi && texts_[sorted[j]][depth] == b) ++j;
    groups.push_back({i, j});
    i = j;
  }
  const auto first_edge = static_cast<uint32_t>(trie->edges.size());
  trie->nodes[index].first_edge = first_edge;
  trie->nodes[index].edges = static_cast<uint32_t>(groups.size());
  trie->edges.resize(trie->edges.size() + groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const uint32_t child = Build(trie, groups[g].first, groups[g].second, depth + 1);
    trie->edges[first_edge + g] = {static_cast<uint8_t>(texts_[sorted[groups[g].first]][depth]), child};
  }
  return index;
}

bool GrammarVocabulary::Allows(const JsonMatcher& matcher, TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= texts_.size()) return false;
  if (end_of_generation_[id]) return matcher.CanEnd();
  if (texts_[id].empty()) return false;
  JsonMatcher copy = matcher;
  return copy.Feed(texts_[id]);
}

bool GrammarVocabulary::Accept(JsonMatcher* matcher, TokenId id) const {
  if (!Allows(*matcher, id)) return false;
  if (!end_of_generation_[id]) matcher->Feed(texts_[id]);
  return true;
}

void GrammarVocabulary::AllowedTokens(const JsonMatcher& matcher, std::vector<uint8_t>* allowed) const {
  const bool in_string = matcher.InStringText();
  if (in_string) {
    *allowed = plain_text_;
  } else {
    allowed->assign(texts_.size(), 0);
  }
  if (matcher.CanEnd())
    for (size_t id = 0; id < texts_.size(); ++id) (*allowed)[id] |= end_of_generation_[id];
  std::vector<JsonMatcher> states(longest_ + 1, matcher);
  const Trie& trie = in_string ? other_ : all_;
  if (!trie.nodes.empty()) Walk(trie, 0, 0, states, allowed);
}

void GrammarVocabulary::Walk(const Trie& trie, uint32_t node, size_t depth, std::vector<JsonMatcher>& states,
                             std::vector<uint8_t>* allowed) const {
  const TrieNode& t = trie.nodes[node];
  for (uint32_t e = t.first_edge; e < t.first_edge + t.edges; ++e) {
    JsonMatcher& next = states[depth + 1];
    next = states[depth];
    if (!next.Feed(trie.edges[e].byte)) continue;
    const TrieNode& child = trie.nodes[trie.edges[e].child];
    for (uint32_t k = child.first_token; k < child.first_token + child.tokens; ++k) {
      const TokenId id = trie.sorted[k];
      if (!end_of_generation_[id]) (*allowed)[id] = 1;
    }
    if (child.edges > 0) Walk(trie, trie.edges[e].child, depth + 1, states, allowed);
  }
}

}  // namespace ragd::inference
