// Prompt-lookup drafting for speculative decoding: RAG answers quote their
// sources, so the tokens that followed earlier occurrences of the latest few
// output tokens are a cheap guess at what comes next. The guess is verified by
// the model in the same batched step (see scheduler.h); a wrong guess costs a
// little compute, never a different output.
//
// Guesses come from n-gram counts: for every context of 1..ngram_max tokens
// seen in a sequence (its prompt and what it has generated), how often each
// token followed it. The longest context that matches the end of the
// sequence gives the most frequent follower (ties: the latest seen), and the
// draft goes on from its own guesses. A second, server-wide table holds the
// phrasing of earlier answers (SharedPhrasing): only continuations that the
// answers to at least two different prompts used, so it drafts the model's
// habits (how an answer opens, how a citation is written), not any one
// answer's content. A prompt seen again (the same question over the same
// passages) does not count twice: the server does not learn an answer by
// heart, so how fast one user's answer comes tells nothing of what another
// user asked, and a repeated question cannot draft long runs that crowd the
// other sequences' steps.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

struct PromptLookupOptions {
  int max_draft = 8;  // tokens proposed at most
  // Longest context looked up first (at most NgramCounts::kMaxN). 6 rather
  // than 4 (DraftAcceptance::kLongMatch follows it): as many accepted tokens
  // from fewer proposed drafts, so fewer rows verified for nothing; 8 drafted
  // less and accepted less (figures in bench/README.md).
  int ngram_max = 6;
  int ngram_min = 1;  // shortest context tried (>= 1)
  int shared_answers =
      256;  // earlier answers (to distinct prompts) whose common phrasing drafts too (0 = none)
  int shared_min_answers = 2;  // a shared continuation drafts once this many of them used it
};

// How often each token followed each context of 1..max_n tokens.
// Thread-safety: none.
class NgramCounts {
 public:
  static constexpr int kMaxN = 6;
  explicit NgramCounts(int max_n = 4);

  // Counts `next` (delta > 0: once more, < 0: once less; a count that reaches
  // zero is dropped) after each context of 1..max_n tokens that ends `before`.
  void Count(std::span<const TokenId> before, TokenId next, int delta = 1);
  // Counts once (with the sign of `delta`) every distinct (context, follower)
  // pair of `other`: a phrase used twice in one answer is still one answer's.
  void CountPresence(const NgramCounts& other, int delta);

  struct Guess {
    TokenId token = -1;   // -1: no context matched
    int n = 0;            // length of the context that matched
    int64_t count = 0;    // how often `token` followed it
    bool unique = false;  // the only token that ever followed it
  };
  // The most frequent follower (ties: the latest counted) of the longest
  // context of min_n..max_n tokens ending `before` that has one counted at
  // least `min_count` times.
  Guess Predict(std::span<const TokenId> before, int min_n, int64_t min_count = 1) const;

  size_t contexts() const { return map_.size(); }
  int max_n() const { return max_n_; }

 private:
  struct Key {
    std::array<TokenId, kMaxN> t{};  // the context, unused entries 0
    int n = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Follower {
    TokenId token;
    int64_t count;
    uint64_t last;  // when it was last counted up
  };
  static Key MakeKey(std::span<const TokenId> before, int n);
  void Add(const Key& key, TokenId next, int64_t delta);

  int max_n_;
  uint64_t clock_ = 0;
  std::unordered_map<Key, std::vector<Follower>, KeyHash> map_;
};

// The phrasing of the answers to the last `capacity` distinct prompts (see
// the file comment). Thread-safety: none (the scheduler's thread).
class SharedPhrasing {
 public:
  SharedPhrasing(int capacity, int max_n);
  // One finished answer to `prompt` (whose last tokens are the context its
  // first tokens followed). Ignored if an answer to the same prompt is
  // still held.
  void Add(std::span<const TokenId> prompt, std::span<const TokenId> answer);
  const NgramCounts& counts() const { return counts_; }
  size_t answers() const { return answers_.size(); }

 private:
  struct Answer {
    uint64_t prompt_hash;
    NgramCounts counts;  // the answer's own
  };
  int capacity_;
  NgramCounts counts_;
  std::deque<Answer> answers_;  // oldest first
};

// Where a draft token came from: the class its chance is learnt in. A guess
// from a context that had one follower, or had it more than once, holds far
// more often than one picked among several, so the two are learnt apart and
// the plan can skip the guesses that rarely hold (figures in bench/README.md).
struct DraftSource {
  bool shared = false;    // SharedPhrasing, not the sequence itself
  int n = 0;              // context length matched
  bool unique = false;    // the context's only follower so far
  bool repeated = false;  // it followed the context at least twice
};

// Fills *draft with up to `limit` tokens guessed after `history`, and
// *sources with where each came from. `shared` may be null.
void ProposeDraft(std::span<const TokenId> history, const NgramCounts& own, const SharedPhrasing* shared,
                  const PromptLookupOptions& options, int limit, std::vector<TokenId>* draft,
                  std::vector<DraftSource>* sources);

// What draft tokens of each source have been worth lately, over all
// sequences: the chance that a draft token holds, given that the ones before
// it did. Thread-safety: none.
class DraftAcceptance {
 public:
  // Contexts of this length or more share one class: the default ngram_max.
  static constexpr int kLongMatch = PromptLookupOptions{}.ngram_max;
  static constexpr int kFollowerKinds = 4;  // unique or not, times repeated or not
  // After a verification: of the draft tokens from `sources`, the first
  // `accepted` held (and the one after them, if any, did not).
  void Record(std::span<const DraftSource> sources, int accepted);
  double chance(const DraftSource& source) const;

 private:
  struct Counts {
    double held = 1, tried = 2;  // decayed counts; the prior is an even chance
  };
  Counts& Class(const DraftSource& s);
  const Counts& Class(const DraftSource& s) const { return const_cast<DraftAcceptance*>(this)->Class(s); }
  std::array<Counts, 2 * kLongMatch * kFollowerKinds> counts_;  // by shared, n, unique, repeated
};

// One sequence's draft on offer for a step: chance[k] is the chance that its
// first k + 1 draft tokens all hold (non-increasing in k).
struct DraftOffer {
  std::vector<double> chance;
};

// How many of each offer's draft tokens a step should verify. The step
// already has `base_rows` rows, one per decoding sequence, each yielding one
// token; each more row costs `row_cost` of the step's fixed cost (reading the
// weights), so a step of R rows costs about 1 + row_cost * R, and the k-th
// draft token of an offer yields chance[k - 1] tokens. Draft tokens are added,
// the most likely first, while each raises the step's expected tokens per
// unit of cost, and at most `max_rows` in all. With one sequence cheap rows
// buy long drafts; with a full batch only drafts that almost surely hold
// pay for their row.
std::vector<int> PlanDrafts(std::span<const DraftOffer> offers, int base_rows, double row_cost, int max_rows);

// What a forward pass costs as a function of its rows (all of them with
// logits): ms ~ fixed + per_row * rows, fitted by least squares over the
// steps timed so far (older steps decaying), with a prior that holds while
// the steps seen do not vary enough in size to tell. Thread-safety: none.
class StepCostModel {
 public:
  explicit StepCostModel(double prior_row_cost = 0.3) : prior_(prior_row_cost) {}
  void Record(int64_t rows, double ms);
  // per_row / fixed: the cost of one more row relative to the fixed cost.
  double RowCost() const;

 private:
  double prior_;
  double w_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0;  // decayed weighted sums
};

}  // namespace ragd::inference
