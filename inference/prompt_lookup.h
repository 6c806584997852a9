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

// How many draft tokens are worth verifying, from the acceptance seen so far.
// Each draft token costs about `row_cost` of a decode step (one more row in
// the batched product); with per-token acceptance p, k tokens yield
// 1 + p + ... + p^k tokens per step. Picks the k <= max_draft that maximises
// tokens per unit of cost. Thread-safety: none (per sequence).
class DraftBudget {
 public:
  explicit DraftBudget(double row_cost = 0.15) : row_cost_(row_cost) {}
  int Length(int max_draft) const;
  // After a verification of `proposed` tokens of which the first `accepted` held.
  void Record(int proposed, int accepted);
  double acceptance() const { return (hits_ + 0.5) / (hits_ + misses_ + 1); }

 private:
  double row_cost_;
  double hits_ = 1, misses_ = 0;  // decayed counts; the prior leans to trying
};

}  // namespace ragd::inference
