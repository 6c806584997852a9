// Turns arbitrary user text into a safe FTS5 MATCH expression.
//
// FTS5 query syntax gives meaning to quotes, parentheses, '*', '^', '+', '-',
// ':' (column filters), and the bare words AND, OR, NOT and NEAR. Instead of
// escaping each, the text is cut into terms at every ASCII character that the
// unicode61 tokenizer treats as a separator anyway (anything but [A-Za-z0-9]),
// and each term is emitted as a double-quoted string, which FTS5 reads as a
// plain phrase whatever it contains. Bytes >= 0x80 stay inside terms; the
// tokenizer splits them further if they are punctuation, and a phrase that
// ends up empty simply matches nothing.
//
// Terms are joined with OR so that BM25 ranks partial matches too. Common
// English function words are dropped (unless nothing else is left): BM25
// gives them almost no weight, but each one matches nearly every chunk and
// would make the query scan the whole index.
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "corpus/store.h"

namespace ragd::corpus {
namespace {

constexpr size_t kMaxTerms = 64;       // bounds the cost of a pasted essay
constexpr size_t kMaxTermBytes = 256;  // longer runs are not words

bool IsStopword(std::string_view lower) {
  static const std::unordered_set<std::string_view> kStopwords = {
      "a",    "about", "above", "after", "again", "all",   "am",    "an",     "and",    "any",   "are",
      "as",   "at",    "be",    "been",  "being", "but",   "by",    "can",    "could",  "did",   "do",
      "does", "doing", "for",   "from",  "had",   "has",   "have",  "having", "he",     "her",   "here",
      "hers", "him",   "his",   "how",   "i",     "if",    "in",    "into",   "is",     "it",    "its",
      "me",   "my",    "of",    "on",    "or",    "our",   "ours",  "she",    "should", "so",    "than",
      "that", "the",   "their", "them",  "then",  "there", "these", "they",   "this",   "those", "to",
      "was",  "we",    "were",  "what",  "when",  "where", "which", "while",  "who",    "whom",  "why",
      "will", "with",  "would", "you",   "your",  "yours"};
  return kStopwords.contains(lower);
}

bool IsTermByte(unsigned char c) {
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

std::vector<std::string> FtsTerms(std::string_view user_text) {
  std::vector<std::string> terms, stopwords;
  std::unordered_set<std::string> seen;
  size_t i = 0;
  while (i < user_text.size() && terms.size() < kMaxTerms) {
    while (i < user_text.size() && !IsTermByte(static_cast<unsigned char>(user_text[i]))) ++i;
    const size_t begin = i;
    while (i < user_text.size() && IsTermByte(static_cast<unsigned char>(user_text[i]))) ++i;
    if (i == begin || i - begin > kMaxTermBytes) continue;
    std::string term(user_text.substr(begin, i - begin));
    std::string key = term;
    for (char& c : key) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (!seen.insert(key).second) continue;
    (IsStopword(key) ? stopwords : terms).push_back(std::move(term));
  }
  if (terms.empty()) terms = std::move(stopwords);
  return terms;
}

std::string JoinFtsTerms(std::span<const std::string> terms) {
  std::string query;
  for (const std::string& term : terms) {
    if (!query.empty()) query += " OR ";
    query += '"';
    query += term;  // holds no '"' by construction
    query += '"';
  }
  return query;
}

std::string BuildFtsQuery(std::string_view user_text) { return JoinFtsTerms(FtsTerms(user_text)); }

}  // namespace ragd::corpus
