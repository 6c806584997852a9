#include "inference/prompt_lookup.h"

#include <algorithm>
#include <cmath>

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

void DraftAcceptance::Record(int matched, int proposed, int accepted) {
  if (proposed <= 0) return;
  constexpr double kDecay = 0.8;  // recent drafts count most: a quote starts and ends
  Counts& c = matched >= kLongMatch ? long_ : short_;
  c.hits = kDecay * c.hits + accepted;
  c.misses = kDecay * c.misses + (accepted < proposed ? 1 : 0);
}

double DraftAcceptance::acceptance(int matched) const {
  const Counts& c = matched >= kLongMatch ? long_ : short_;
  return (c.hits + 0.5) / (c.hits + c.misses + 1);
}

std::vector<int> PlanDrafts(std::span<const DraftOffer> offers, int base_rows, double row_cost,
                            int max_rows) {
  std::vector<int> take(offers.size(), 0);
  double tokens = base_rows;
  int rows = base_rows;
  while (rows < max_rows) {
    // The most likely next draft token over all offers (p^k falls with k).
    int best = -1;
    double value = 0;
    for (size_t i = 0; i < offers.size(); ++i) {
      if (take[i] >= offers[i].available) continue;
      const double v = std::pow(offers[i].acceptance, take[i] + 1);
      if (v > value) {
        value = v;
        best = static_cast<int>(i);
      }
    }
    // Worth a row iff (tokens + v) / (1 + c(rows + 1)) > tokens / (1 + c rows).
    if (best < 0 || value * (1 + row_cost * rows) <= row_cost * tokens) break;
    ++take[best];
    tokens += value;
    ++rows;
  }
  return take;
}

void StepCostModel::Record(int64_t rows, double ms) {
  constexpr double kDecay = 0.98;  // about the last 50 steps
  const double x = static_cast<double>(rows);
  w_ = kDecay * w_ + 1;
  x_ = kDecay * x_ + x;
  y_ = kDecay * y_ + ms;
  xx_ = kDecay * xx_ + x * x;
  xy_ = kDecay * xy_ + x * ms;
}

double StepCostModel::RowCost() const {
  if (w_ <= 0) return prior_;
  const double mx = x_ / w_, my = y_ / w_;
  if (my <= 0) return prior_;
  const double sxx = xx_ - w_ * mx * mx, sxy = xy_ - w_ * mx * my;
  // Ridge towards the prior slope (fixed = my / (1 + prior * mx), slope =
  // prior * fixed), worth kPriorRows2 of spread in rows: a run of equal-size
  // steps leaves the prior in place.
  constexpr double kPriorRows2 = 8;
  const double prior_slope = prior_ * my / (1 + prior_ * mx);
  const double slope = (sxy + kPriorRows2 * prior_slope) / (std::max(0.0, sxx) + kPriorRows2);
  const double fixed = my - slope * mx;
  if (fixed <= 0) return 1.0;
  return std::clamp(slope / fixed, 0.01, 1.0);
}

}  // namespace ragd::inference
