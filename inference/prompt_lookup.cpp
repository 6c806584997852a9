#include "inference/prompt_lookup.h"

#include <algorithm>

namespace ragd::inference {

int ProposeDraft(std::span<const TokenId> history, const PromptLookupOptions& options, int limit,
                 std::vector<TokenId>* draft) {
  draft->clear();
  const int64_t size = static_cast<int64_t>(history.size());
  const int64_t want = std::min(options.max_draft, limit);
  if (want <= 0) return 0;
  for (int64_t n = std::min<int64_t>(options.ngram_max, size - 1); n >= std::max(1, options.ngram_min); --n) {
    const auto suffix = history.subspan(size - n, n);
    // Latest start j < size - n whose n tokens equal the suffix.
    for (int64_t j = size - n - 1; j >= 0; --j) {
      if (history[j] != suffix[0] || !std::equal(suffix.begin(), suffix.end(), history.begin() + j)) continue;
      const int64_t from = j + n;
      const int64_t count = std::min(want, size - from);
      draft->assign(history.begin() + from, history.begin() + from + count);
      return static_cast<int>(n);
    }
  }
  return 0;
}

int DraftBudget::Length(int max_draft) const {
  const double p = acceptance();
  int best = 0;
  double best_rate = 1.0, gain = 1.0, term = 1.0;
  for (int k = 1; k <= max_draft; ++k) {
    term *= p;
    gain += term;
    const double rate = gain / (1.0 + row_cost_ * k);
    if (rate > best_rate) {
      best_rate = rate;
      best = k;
    }
  }
  return best;
}

void DraftBudget::Record(int proposed, int accepted) {
  if (proposed <= 0) return;
  constexpr double kDecay = 0.8;  // recent drafts count most: a quote starts and ends
  hits_ = kDecay * hits_ + accepted;
  misses_ = kDecay * misses_ + (accepted < proposed ? 1 : 0);
}

}  // namespace ragd::inference
