#include "inference/tokenizer/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "inference/kernels/kernels.h"

namespace ragd::inference {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Status RangeError(const std::string& field, const std::string& range) {
  return Status::InvalidArgument(field + " must be " + range);
}

bool In(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }

// A strict total order: higher logit first, then lower id.
bool Better(const Sampler::Candidate& a, const Sampler::Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

}  // namespace

Status ValidateSamplingOptions(const SamplingOptions& o, int vocab_size) {
  if (!In(o.temperature, 0, 100)) return RangeError("temperature", "in [0, 100]");
  if (o.top_k < 0) return RangeError("top_k", ">= 0");
  if (!In(o.top_p, 0, 1)) return RangeError("top_p", "in [0, 1]");
  if (!In(o.min_p, 0, 1)) return RangeError("min_p", "in [0, 1]");
  if (!In(o.repeat_penalty, 0, 10) || o.repeat_penalty == 0)
    return RangeError("repeat_penalty", "in (0, 10]");
  if (o.repeat_last_n < -1) return RangeError("repeat_last_n", ">= -1");
  if (!In(o.presence_penalty, -2, 2)) return RangeError("presence_penalty", "in [-2, 2]");
  if (!In(o.frequency_penalty, -2, 2)) return RangeError("frequency_penalty", "in [-2, 2]");
  for (const auto& [id, bias] : o.logit_bias) {
    const std::string field = "logit_bias[" + std::to_string(id) + "]";
    if (id < 0 || id >= vocab_size)
      return RangeError(field, "a token id in [0, " + std::to_string(vocab_size) + ")");
    if (!In(bias, -100, 100)) return RangeError(field, "in [-100, 100]");
  }
  return Status::Ok();
}

Result<Sampler> Sampler::Create(const SamplingOptions& options, int vocab_size) {
  if (vocab_size <= 0) return Status::InvalidArgument("vocab_size must be > 0");
  RAGD_RETURN_IF_ERROR(ValidateSamplingOptions(options, vocab_size));
  return Sampler(options, vocab_size);
}

Sampler::Sampler(const SamplingOptions& options, int vocab_size)
    : options_(options),
      vocab_size_(vocab_size),
      rng_(options.seed ? *options.seed : std::random_device{}()) {}

double Sampler::Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

// The penalties on the last repeat_last_n tokens of the history, then the
// bias, as changed logits sorted by id: the vocabulary itself is not copied.
void Sampler::ChangeLogits(const float* logits, size_t n, std::span<const TokenId> history) {
  const SamplingOptions& o = options_;
  changed_.clear();
  const size_t window =
      o.repeat_last_n < 0 ? history.size() : std::min(history.size(), static_cast<size_t>(o.repeat_last_n));
  if (window > 0 && (o.repeat_penalty != 1.0f || o.presence_penalty != 0.0f || o.frequency_penalty != 0.0f)) {
    recent_.clear();
    for (TokenId id : history.subspan(history.size() - window)) {
      if (id >= 0 && static_cast<size_t>(id) < n) recent_.push_back(id);
    }
    std::sort(recent_.begin(), recent_.end());
    for (size_t i = 0; i < recent_.size();) {
      const TokenId id = recent_[i];
      size_t count = 0;
      for (; i < recent_.size() && recent_[i] == id; ++i) ++count;
      float x = logits[id];
      x = x > 0 ? x / o.repeat_penalty : x * o.repeat_penalty;
      x -= static_cast<float>(count) * o.frequency_penalty + o.presence_penalty;
      changed_.push_back({id, x});
    }
  }
  for (const auto& [id, bias] : o.logit_bias) {
    if (static_cast<size_t>(id) >= n) continue;
    auto at = std::lower_bound(changed_.begin(), changed_.end(), id,
                               [](const Changed& c, TokenId v) { return c.id < v; });
    if (at == changed_.end() || at->id != id) at = changed_.insert(at, {id, logits[id]});
    at->logit += bias;
  }
}

// top-k: the k best, in no particular order, with a k-sized heap whose front
// is the worst kept (one pass, no copy of the vocabulary). Once the heap is
// full only a logit >= the front's can enter: a vector scan skips to the next
// one, and stops at each changed logit to offer its new value instead.
void Sampler::KeepBest(const float* l, size_t n, size_t k) {
  candidates_.clear();
  const Changed* next = changed_.data();
  const Changed* const last = next + changed_.size();
  size_t i = 0;
  for (; i < n && candidates_.size() < k; ++i) {
    float v = l[i];
    if (next != last && static_cast<size_t>(next->id) == i) v = (next++)->logit;
    if (!(v > kNegInf)) continue;
    candidates_.push_back({v, static_cast<TokenId>(i), 0.0f});
    if (k < n) std::push_heap(candidates_.begin(), candidates_.end(), Better);
  }
  if (k == n || candidates_.size() < k) return;
  auto offer = [&](int64_t j, float v) {
    const Candidate c{v, static_cast<TokenId>(j), 0.0f};
    if (!Better(c, candidates_.front())) return;
    std::pop_heap(candidates_.begin(), candidates_.end(), Better);
    candidates_.back() = c;
    std::push_heap(candidates_.begin(), candidates_.end(), Better);
  };
  const auto end = static_cast<int64_t>(n);
  for (auto begin = static_cast<int64_t>(i);;) {
    const int64_t stop = next != last ? next->id : end;
    for (int64_t j = FindAtLeast(l, begin, stop, candidates_.front().logit); j < stop;
         j = FindAtLeast(l, j + 1, stop, candidates_.front().logit))
      offer(j, l[j]);
    if (stop == end) return;
    offer(stop, (next++)->logit);
    begin = stop + 1;
  }
}

TokenId Sampler::Sample(std::span<const float> logits, std::span<const TokenId> history) {
  const SamplingOptions& o = options_;
  const size_t n = std::min(logits.size(), static_cast<size_t>(vocab_size_));
  if (n == 0) return 0;
  const float* l = logits.data();
  ChangeLogits(l, n, history);

  // Greedy: the argmax (NaN skipped, 0 when nothing is above -inf): vectorized
  // over the vocabulary, or the best one kept where logits changed.
  if (o.temperature == 0.0f && changed_.empty()) {
    float max_logit;
    return static_cast<TokenId>(Argmax(l, static_cast<int64_t>(n), &max_logit));
  }
  const size_t k = o.temperature == 0.0f                             ? 1
                   : o.top_k > 0 && static_cast<size_t>(o.top_k) < n ? static_cast<size_t>(o.top_k)
                                                                     : n;
  KeepBest(l, n, k);
  // The best candidate is the argmax (the first of the highest logits, which
  // the k kept always hold), so the vocabulary is read once.
  if (candidates_.empty()) return 0;  // nothing above -inf
  const Candidate top = *std::min_element(candidates_.begin(), candidates_.end(), Better);
  const float max_logit = top.logit;
  const TokenId best = top.id;
  if (o.temperature == 0.0f || max_logit == std::numeric_limits<float>::infinity()) return best;

  double total = 0;  // softmax mass at temperature 1, relative to the best token
  for (Candidate& c : candidates_) {
    c.p = std::exp(c.logit - max_logit);
    total += c.p;
  }

  // top-p: the smallest set of best tokens holding top_p of the mass, found by
  // quickselect on the cumulative mass (linear time, no full sort). The
  // invariant: ranks [lo, hi) sit in [lo, hi), `before` is the mass of the
  // ranks below lo, and the last kept rank lies in [lo, hi).
  if (o.top_p < 1.0f && candidates_.size() > 1) {
    const double target = static_cast<double>(o.top_p) * total;
    size_t lo = 0, hi = candidates_.size();
    double before = 0;
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo - 1) / 2;  // <= hi - 2: both branches shrink
      std::nth_element(candidates_.begin() + lo, candidates_.begin() + mid, candidates_.begin() + hi, Better);
      double mass = before;
      for (size_t i = lo; i <= mid; ++i) mass += candidates_[i].p;
      if (mass >= target) {
        hi = mid + 1;
      } else {
        before = mass;
        lo = mid + 1;
      }
    }
    candidates_.resize(std::min(candidates_.size(), lo + 1));
  }
  // min-p: p >= min_p * p_max, and p_max is 1 here.
  if (o.min_p > 0.0f) {
    auto end = std::partition(candidates_.begin(), candidates_.end(),
                              [&](const Candidate& c) { return c.p >= o.min_p; });
    candidates_.erase(end, candidates_.end());
  }

  // Draw at the requested temperature. The survivors are in no particular
  // order, but in a deterministic one: same seed and logits, same token.
  if (o.temperature != 1.0f) {
    for (Candidate& c : candidates_) c.p = std::exp((c.logit - max_logit) / o.temperature);
  }
  total = 0;
  for (const Candidate& c : candidates_) total += c.p;
  double r = Uniform() * total;
  for (const Candidate& c : candidates_) {
    r -= c.p;
    if (r < 0) return c.id;
  }
  // Rounding left r >= 0: the last candidate with any weight.
  for (size_t i = candidates_.size(); i-- > 0;) {
    if (candidates_[i].p > 0) return candidates_[i].id;
  }
  return best;
}

float TokenLogprobs(std::span<const float> logits, TokenId chosen, int top_n,
                    std::vector<TokenLogprob>* top) {
  const size_t n = logits.size();
  top->clear();
  float max_logit = kNegInf;
  for (float v : logits)
    if (v > max_logit) max_logit = v;
  if (!(max_logit > kNegInf) || !std::isfinite(max_logit)) return kNegInf;
  double sum = 0;
  for (float v : logits)
    if (v > kNegInf) sum += std::exp(static_cast<double>(v) - max_logit);
  const double log_z = max_logit + std::log(sum);
  const auto logprob = [&](size_t i) {
    const float v = logits[i];
    return v > kNegInf ? static_cast<float>(v - log_z) : kNegInf;
  };
  // The best top_n by a heap whose front is the worst kept.
  const auto better = [](const TokenLogprob& a, const TokenLogprob& b) {
    return a.logprob > b.logprob || (a.logprob == b.logprob && a.id < b.id);
  };
  const size_t k = std::min(static_cast<size_t>(std::max(top_n, 0)), n);
  for (size_t i = 0; i < n && k > 0; ++i) {
    const TokenLogprob c{static_cast<TokenId>(i), logprob(i)};
    if (top->size() < k) {
      top->push_back(c);
      std::push_heap(top->begin(), top->end(), better);
    } else if (better(c, top->front())) {
      std::pop_heap(top->begin(), top->end(), better);
      top->back() = c;
      std::push_heap(top->begin(), top->end(), better);
    }
  }
  std::sort_heap(top->begin(), top->end(), better);
  return chosen >= 0 && static_cast<size_t>(chosen) < n ? logprob(chosen) : kNegInf;
}

Result<StopMatcher> StopMatcher::Create(std::vector<std::string> stops) {
  for (size_t i = 0; i < stops.size(); ++i) {
    if (stops[i].empty()) return Status::InvalidArgument("stop[" + std::to_string(i) + "] is empty");
  }
  StopMatcher m;
  m.stops_ = std::move(stops);
  return m;
}

std::string StopMatcher::Push(std::string_view text) {
  if (stopped_) return "";
  pending_ += text;
  // Earliest stop string wins; on a tie at one position, the longest.
  size_t best = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = pending_.find(s);
    if (at != std::string::npos && (at < best || (at == best && s.size() > matched_.size()))) {
      best = at;
      matched_ = s;
    }
  }
  if (best != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, best);
    pending_.clear();
    return out;
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    for (size_t len = std::min(s.size() - 1, pending_.size()); len > hold; --len) {
      if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
        hold = len;
        break;
      }
    }
  }
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopMatcher::Flush() {
  std::string out = stopped_ ? std::string() : pending_;
  pending_.clear();
  return out;
}

}  // namespace ragd::inference
