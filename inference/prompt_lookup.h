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
// min(options.max_draft, limit) tokens, into *draft. Empty when nothing matches.
void ProposeDraft(std::span<const TokenId> history, const PromptLookupOptions& options, int limit,
                  std::vector<TokenId>* draft);

}  // namespace ragd::inference
