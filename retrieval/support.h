// Evidence that a passage supports a sentence: the two measurements that
// citation attribution (retrieval/attribution.h) combines into one support
// score, and the score itself.
//
//   cosine   the sentence's embedding against the passage's: the largest
//            cosine similarity over the whole passage and each of its
//            sentences (a long passage's own vector dilutes the one sentence
//            that carries the fact).
//   lexical  the weighted share of the sentence's content tokens found in the
//            passage (ContentTokens: words lower-cased with accents kept,
//            function words of English, Portuguese, French, Spanish and German
//            dropped; numbers weigh 3, identifiers such as RAGD_SERVER_PORT or
//            all-MiniLM-L6-v2 weigh 2, other words 1). Words of 5 letters or
//            more also match a passage word with the same first letters
//            ("configuração" ~ "configuration"); numbers and identifiers only
//            match exactly. Numbers are compared without their group and
//            decimal separators, so "200,000", "200.000" and "200 000" match
//            "200000".
//   gaps     each of the two minus its best value over all the sources of the
//            answer: the sources are retrieved for one question and share its
//            topic, so how a source compares with the others tells more than
//            its own cosine (cross-lingual cosines are low for every source).
//   number   whether a number of the sentence is missing from the passage
//            ("16 answers at a time" against a passage that says 8).
//   support  1 / (1 + exp(-(bias + sum of weight * feature))), in [0, 1]; the
//            weights are fitted on the labelled sentence and passage pairs in
//            tests/data/attribution/ (attribution.h gives the figures).
//
// Thread-safety: pure functions and immutable values.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/status.h"

namespace ragd::retrieval {

// Embeds texts, one vector per text in order (retrieval::Embedder::Embed, or a
// fake in tests). Vectors need not be normalized.
using EmbedTextsFn = std::function<Result<std::vector<std::vector<float>>>(const std::vector<std::string>&)>;

// embed(texts), with an error unless it gave exactly one vector per text.
Result<std::vector<std::vector<float>>> EmbedEach(const EmbedTextsFn& embed,
                                                  const std::vector<std::string>& texts);

enum class TokenKind { kWord, kIdentifier, kNumber };

struct ContentToken {
  std::string text;  // lower-cased; a number's digits only
  TokenKind kind = TokenKind::kWord;
};

// The content tokens of `text`, in order, repeats kept.
std::vector<ContentToken> ContentTokens(std::string_view text);

// 3 for numbers, 2 for identifiers, 1 for words.
double TokenWeight(TokenKind kind);

// Sum of the weights of distinct tokens.
double ContentWeight(const std::vector<ContentToken>& tokens);

// The content tokens of a passage, for overlap lookups.
class LexicalIndex {
 public:
  LexicalIndex() = default;
  explicit LexicalIndex(std::string_view text);

  // Exact match, or for words of >= 5 bytes a passage word sharing a prefix of
  // at least max(5, 3/4 of the shorter word) bytes.
  bool Contains(const ContentToken& token) const;

 private:
  std::unordered_set<std::string> exact_;
  std::vector<std::string> long_words_;  // words of >= 5 bytes, for prefix matches
};

// Weighted share of the distinct `sentence` tokens the passage contains; 0
// for a sentence without content tokens.
double LexicalSupport(const std::vector<ContentToken>& sentence, const LexicalIndex& passage);

// A passage made ready to score many sentences against.
struct PassageEvidence {
  LexicalIndex lexical;
  std::vector<std::vector<float>> vectors;  // the whole passage, then each of its sentences
};

// Builds the evidence of each passage with one call of `embed` (the passages
// and their sentences together). Errors are embed's.
Result<std::vector<PassageEvidence>> PreparePassages(const std::vector<std::string>& passages,
                                                     const EmbedTextsFn& embed);

// The measurements of one sentence against one of the answer's sources.
struct SupportFeatures {
  double cosine = 0;          // in [-1, 1]
  double lexical = 0;         // in [0, 1]
  double cosine_gap = 0;      // cosine minus the best cosine over all the sources (<= 0)
  double lexical_gap = 0;     // lexical minus the best lexical over all the sources (<= 0)
  double number_missing = 0;  // 1 when a number of the sentence is not in the passage, else 0
};

// The features of one sentence against each source, in order (the gaps are
// relative to the best of `sources`).
std::vector<SupportFeatures> MeasureSupport(const std::vector<ContentToken>& sentence_tokens,
                                            const std::vector<float>& sentence_vector,
                                            const std::vector<const PassageEvidence*>& sources);

// Coefficients of the logistic support score.
struct SupportModel {
  double bias = 0;
  double cosine = 0;
  double lexical = 0;
  double cosine_gap = 0;
  double lexical_gap = 0;
  double number_missing = 0;
};

double SupportScore(const SupportFeatures& features, const SupportModel& model);

// Cosine similarity; 0 when either vector is zero or the sizes differ.
double Cosine(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace ragd::retrieval
