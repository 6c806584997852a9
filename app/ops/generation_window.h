// The generations of the last hour, for the admin page's status panel: how
// many, their tokens, time to first token (p50/p95) and decode speed.
// Prometheus histograms (metrics.h) count since start and leave percentiles
// to the scraper; a server without a scraper still wants "how is it doing
// now", so the recent samples themselves are kept here.
//
// Bounded: samples older than the window are dropped as new ones arrive, and
// at most kMaxSamples are held (the oldest go first), so a busy hour costs a
// fixed few MiB.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace ragd::app {

struct GenerationSample {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  double ttft_s = -1;  // < 0: no token came (error or cancelled before the first)
  double e2e_s = 0;    // admission to the last token
};

struct GenerationSummary {
  int64_t generations = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::optional<double> ttft_p50_s, ttft_p95_s;  // nearest rank; empty without a first token
  // Tokens after the first over the time after the first, over all
  // generations that made at least two: one sequence's decode speed, the
  // figure a user reading a stream feels.
  std::optional<double> decode_tokens_per_s;
};

class GenerationWindow {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxSamples = 100000;

  explicit GenerationWindow(Clock::duration span = std::chrono::hours(1)) : span_(span) {}

  void Add(const GenerationSample& sample, Clock::time_point at = Clock::now());
  GenerationSummary Summarize(Clock::time_point now = Clock::now()) const;

 private:
  void DropBefore(Clock::time_point cutoff);  // mu_ held

  const Clock::duration span_;
  mutable std::mutex mu_;
  std::deque<std::pair<Clock::time_point, GenerationSample>> samples_;  // GUARDED_BY(mu_), oldest first
};

}  // namespace ragd::app
