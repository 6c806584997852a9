#include "app/ops/generation_window.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ragd::app {
namespace {

// The nearest-rank percentile of sorted values (p in (0, 100]).
double NearestRank(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

void GenerationWindow::DropBefore(Clock::time_point cutoff) {
  while (!samples_.empty() && samples_.front().first < cutoff) samples_.pop_front();
}

void GenerationWindow::Add(const GenerationSample& sample, Clock::time_point at) {
  std::lock_guard<std::mutex> lock(mu_);
  DropBefore(at - span_);
  if (samples_.size() >= kMaxSamples) samples_.pop_front();
  samples_.emplace_back(at, sample);
}

GenerationSummary GenerationWindow::Summarize(Clock::time_point now) const {
  GenerationSummary s;
  std::vector<double> ttfts;
  double decode_tokens = 0, decode_seconds = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point cutoff = now - span_;
    for (const auto& [at, g] : samples_) {
      if (at < cutoff || at > now) continue;
      ++s.generations;
      s.prompt_tokens += g.prompt_tokens;
      s.completion_tokens += g.completion_tokens;
      if (g.ttft_s < 0) continue;
      ttfts.push_back(g.ttft_s);
      if (g.completion_tokens >= 2 && g.e2e_s > g.ttft_s) {
        decode_tokens += static_cast<double>(g.completion_tokens - 1);
        decode_seconds += g.e2e_s - g.ttft_s;
      }
    }
  }
  if (!ttfts.empty()) {
    std::sort(ttfts.begin(), ttfts.end());
    s.ttft_p50_s = NearestRank(ttfts, 50);
    s.ttft_p95_s = NearestRank(ttfts, 95);
  }
  if (decode_seconds > 0) s.decode_tokens_per_s = decode_tokens / decode_seconds;
  return s;
}

}  // namespace ragd::app
