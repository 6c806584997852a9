// Prompt-lookup drafting for speculative decoding: RAG answers quote their
// sources, so the tokens that followed an earlier occurrence of the latest few
// output tokens are a cheap guess at what comes next. The guess is verified by
// the model in the same batched step (see scheduler.h); a wrong guess costs a
// little compute, never a different output.
#pragma once

#include <span>
#include <vector>

#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

struct PromptLookupOptions {
  int max_draft = 8;  // tokens proposed at most
  int ngram_max = 4;  // longest suffix of the history looked up first
  int ngram_min = 2;  // shortest suffix tried (>= 1)
};

// Looks for the latest earlier occurrence of the last n tokens of `history`
// (n from ngram_max down to ngram_min) and copies what followed it, at most
// min(options.max_draft, limit) tokens, into *draft. Returns n, or 0 (and an
// empty draft) when nothing matches.
int ProposeDraft(std::span<const TokenId> history, const PromptLookupOptions& options, int limit,
                 std::vector<TokenId>* draft);

// What a sequence's drafts have been worth so far: per-token acceptance p
// (the chance that a draft token holds, given that the ones before it did),
// kept apart for drafts from short and from long n-gram matches (a long match
// is usually a quote going on). Thread-safety: none (per sequence).
class DraftAcceptance {
 public:
  static constexpr int kLongMatch = 3;  // n-gram matches of this length or more count as long
  // After a verification of `proposed` tokens drafted from a match of
  // `matched` tokens, of which the first `accepted` held.
  void Record(int matched, int proposed, int accepted);
  double acceptance(int matched) const;

 private:
  struct Counts {
    double hits = 1, misses = 0;  // decayed counts; the prior leans to trying
  };
  Counts short_, long_;
};

// One sequence's draft on offer for a step: `available` proposed tokens with
// per-token acceptance `acceptance`.
struct DraftOffer {
  double acceptance = 0;
  int available = 0;
};

// How many of each offer's draft tokens a step should verify. The step
// already has `base_rows` rows, one per decoding sequence, each yielding one
// token; each more row costs `row_cost` of the step's fixed cost (reading the
// weights), so a step of R rows costs about 1 + row_cost * R, and the k-th
// draft token of an offer yields acceptance^k tokens. Draft tokens are added,
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
