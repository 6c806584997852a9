#include "inference/prompt_lookup.h"

#include <algorithm>
#include <cmath>

namespace ragd::inference {

NgramCounts::NgramCounts(int max_n) : max_n_(std::clamp(max_n, 1, kMaxN)) {}

size_t NgramCounts::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k.n + 1);
  for (int i = 0; i < k.n; ++i) h = (h ^ static_cast<uint32_t>(k.t[i])) * 0x100000001b3ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

NgramCounts::Key NgramCounts::MakeKey(std::span<const TokenId> before, int n) {
  Key key;
  key.n = n;
  std::copy(before.end() - n, before.end(), key.t.begin());
  return key;
}

void NgramCounts::Add(const Key& key, TokenId next, int64_t delta) {
  if (delta > 0) ++clock_;
  auto it = map_.find(key);
  if (it == map_.end()) {
    if (delta <= 0) return;
    it = map_.emplace(key, std::vector<Follower>{}).first;
  }
  auto& followers = it->second;
  auto f =
      std::find_if(followers.begin(), followers.end(), [&](const Follower& x) { return x.token == next; });
  if (f == followers.end()) {
    if (delta <= 0) return;
    followers.push_back({next, delta, clock_});
    return;
  }
  f->count += delta;
  if (delta > 0) f->last = clock_;
  if (f->count > 0) return;
  followers.erase(f);
  if (followers.empty()) map_.erase(it);
}

void NgramCounts::Count(std::span<const TokenId> before, TokenId next, int delta) {
  const int top = std::min<int>(max_n_, static_cast<int>(before.size()));
  for (int n = 1; n <= top; ++n) Add(MakeKey(before, n), next, delta);
}

void NgramCounts::CountPresence(const NgramCounts& other, int delta) {
  const int64_t sign = delta > 0 ? 1 : -1;
  for (const auto& [key, followers] : other.map_)
    for (const Follower& f : followers) Add(key, f.token, sign);
}

NgramCounts::Guess NgramCounts::Predict(std::span<const TokenId> before, int min_n, int64_t min_count) const {
  const int top = std::min<int>(max_n_, static_cast<int>(before.size()));
  for (int n = top; n >= std::max(1, min_n); --n) {
    const auto it = map_.find(MakeKey(before, n));
    if (it == map_.end()) continue;
    const Follower* best = nullptr;
    for (const Follower& f : it->second)
      if (best == nullptr || f.count > best->count || (f.count == best->count && f.last > best->last))
        best = &f;
    if (best->count >= min_count) return {best->token, n, best->count, it->second.size() == 1};
  }
  return {};
}

SharedPhrasing::SharedPhrasing(int capacity, int max_n) : capacity_(std::max(0, capacity)), counts_(max_n) {}

void SharedPhrasing::Add(std::span<const TokenId> prompt, std::span<const TokenId> answer) {
  if (capacity_ == 0 || answer.empty()) return;
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a over the prompt's tokens
  for (const TokenId t : prompt) hash = (hash ^ static_cast<uint32_t>(t)) * 0x100000001b3ull;
  for (const Answer& a : answers_)
    if (a.prompt_hash == hash) return;
  const int max_n = counts_.max_n();
  std::vector<TokenId> stream(prompt.end() - std::min<ptrdiff_t>(prompt.size(), max_n), prompt.end());
  const size_t first = stream.size();
  stream.insert(stream.end(), answer.begin(), answer.end());
  NgramCounts own(max_n);
  for (size_t i = std::max<size_t>(first, 1); i < stream.size(); ++i)
    own.Count(std::span<const TokenId>(stream).first(i), stream[i]);
  counts_.CountPresence(own, +1);
  answers_.push_back({hash, std::move(own)});
  if (answers_.size() > static_cast<size_t>(capacity_)) {
    counts_.CountPresence(answers_.front().counts, -1);
    answers_.pop_front();
  }
}

void ProposeDraft(std::span<const TokenId> history, const NgramCounts& own, const SharedPhrasing* shared,
                  const PromptLookupOptions& options, int limit, std::vector<TokenId>* draft,
                  std::vector<DraftSource>* sources) {
  draft->clear();
  sources->clear();
  const int want = std::min(options.max_draft, limit);
  if (want <= 0) return;
  // The last tokens of the history, then the draft's own guesses.
  const size_t keep = static_cast<size_t>(NgramCounts::kMaxN);
  std::vector<TokenId> tail(history.end() - std::min(history.size(), keep), history.end());
  while (static_cast<int>(draft->size()) < want) {
    NgramCounts::Guess g = own.Predict(tail, options.ngram_min);
    bool from_shared = false;
    if (shared != nullptr) {
      const auto s = shared->counts().Predict(tail, std::max(options.ngram_min, g.n + 1),
                                              std::max(1, options.shared_min_answers));
      if (s.token >= 0) {
        g = s;
        from_shared = true;
      }
    }
    if (g.token < 0) break;
    draft->push_back(g.token);
    sources->push_back({from_shared, g.n, g.unique, g.count >= 2});
    tail.push_back(g.token);
    if (tail.size() > keep) tail.erase(tail.begin());
  }
}

DraftAcceptance::Counts& DraftAcceptance::Class(const DraftSource& s) {
  const int n = std::clamp(s.n, 1, kLongMatch) - 1;
  return counts_[((s.shared ? kLongMatch : 0) + n) * kFollowerKinds + (s.unique ? 2 : 0) +
                 (s.repeated ? 1 : 0)];
}

void DraftAcceptance::Record(std::span<const DraftSource> sources, int accepted) {
  constexpr double kDecay = 0.995;  // about the last 200 tries of a class
  for (int i = 0; i < static_cast<int>(sources.size()) && i <= accepted; ++i) {
    Counts& c = Class(sources[i]);
    c.held = kDecay * c.held + (i < accepted ? 1 : 0);
    c.tried = kDecay * c.tried + 1;
  }
}

double DraftAcceptance::chance(const DraftSource& source) const {
  const Counts& c = Class(source);
  return c.held / c.tried;
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
      if (take[i] >= static_cast<int>(offers[i].chance.size())) continue;
      const double v = offers[i].chance[take[i]];
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
