#include "inference/prompt_lookup.h"

#include <algorithm>

namespace ragd::inference {

void ProposeDraft(std::span<const TokenId> history, const PromptLookupOptions& options, int limit,
                  std::vector<TokenId>* draft) {
  draft->clear();
  const int64_t size = static_cast<int64_t>(history.size());
  const int64_t want = std::min(options.max_draft, limit);
  if (want <= 0) return;
  for (int64_t n = std::min<int64_t>(options.ngram_max, size - 1); n >= std::max(1, options.ngram_min); --n) {
    const auto suffix = history.subspan(size - n, n);
    // Latest start j < size - n whose n tokens equal the suffix.
    for (int64_t j = size - n - 1; j >= 0; --j) {
      if (history[j] != suffix[0] || !std::equal(suffix.begin(), suffix.end(), history.begin() + j)) continue;
      const int64_t from = j + n;
      const int64_t count = std::min(want, size - from);
      draft->assign(history.begin() + from, history.begin() + from + count);
      return;
    }
  }
}

}  // namespace ragd::inference
