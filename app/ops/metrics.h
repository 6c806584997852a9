// Process-wide counters, gauges and histograms in the Prometheus text format
// (exposition format 0.0.4). Names carry their unit (`_seconds`, `_tokens`);
// labels come only from small fixed sets (route, status, finish reason),
// never from user ids or free text.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "app/ops/generation_window.h"

namespace ragd::app {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Appends the _bucket/_sum/_count lines of `name` with `labels` ("" or `a="b"`).
  void Render(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // GUARDED_BY(mu_); one per bound, plus +Inf
  double sum_ = 0;                // GUARDED_BY(mu_)
  uint64_t count_ = 0;            // GUARDED_BY(mu_)
};

// One value read at scrape time: a gauge, or a counter kept by another module.
struct MetricSample {
  std::string name;
  double value = 0;
  std::string help;
  bool counter = false;
  std::string labels;  // "" or `a="b",c="d"`; samples of one name are rendered together
};

class Metrics {
 public:
  Metrics();

  // One finished HTTP request (route pattern, e.g. "/v1/ask", and status code).
  void CountRequest(const std::string& route, int status, double seconds);
  // A generation of `model` (an LLM id) that ended; finish_reason "stop",
  // "length", "cancelled", "error".
  void CountGeneration(const std::string& model, const std::string& finish_reason, int64_t prompt_tokens,
                       int64_t completion_tokens, double ttft_s, double e2e_s, double queue_s);
  void ObserveInterTokenLatency(double seconds) { itl_.Observe(seconds); }
  void ObserveRetrieval(double seconds) { retrieval_.Observe(seconds); }
  void CountQuotaRejection() { quota_rejections_++; }
  void CountRateLimitRejection() { rate_limit_rejections_++; }
  void CountContextLengthError() { context_errors_++; }
  void CountEmbeddingTokens(int64_t n) { embedding_tokens_ += n; }

  // Values owned elsewhere, read at scrape time (running requests, cache use...).
  void SetGaugeSource(std::function<std::vector<MetricSample>()> source);

  std::string Render() const;
  // The generations of the last hour (the admin page's status panel).
  GenerationSummary RecentGenerations() const { return recent_.Summarize(); }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // GUARDED_BY(mu_)
  struct ModelCounts {
    std::map<std::string, uint64_t> finish_reasons;
    int64_t prompt_tokens = 0, completion_tokens = 0;
  };
  std::map<std::string, ModelCounts> models_;          // by model id, GUARDED_BY(mu_)
  std::function<std::vector<MetricSample>()> gauges_;  // GUARDED_BY(mu_)
  std::atomic<int64_t> embedding_tokens_{0};
  std::atomic<int64_t> quota_rejections_{0}, rate_limit_rejections_{0}, context_errors_{0};
  Histogram request_latency_, ttft_, itl_, e2e_, queue_, retrieval_;
  GenerationWindow recent_;
};

}  // namespace ragd::app
