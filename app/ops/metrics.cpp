#include "app/ops/metrics.h"

#include <algorithm>
#include <cstdio>

namespace ragd::app {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void Header(std::string* out, const char* name, const char* type, const char* help) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

const std::vector<double> kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                            1,     2.5,  5,     10,   30,  60,   120};
const std::vector<double> kFastBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1};

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string sep = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? Num(bounds_[i]) : "+Inf";
    *out += name + "_bucket{" + sep + "le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  *out += name + "_sum" + braces + " " + Num(sum_) + "\n";
  *out += name + "_count" + braces + " " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : request_latency_(kLatencyBounds),
      ttft_(kLatencyBounds),
      itl_(kFastBounds),
      e2e_(kLatencyBounds),
      queue_(kLatencyBounds),
      retrieval_(kFastBounds) {}

void Metrics::CountRequest(const std::string& route, int status, double seconds) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++requests_[{route, status}];
  }
  request_latency_.Observe(seconds);
}

void Metrics::CountGeneration(const std::string& model, const std::string& finish_reason,
                              int64_t prompt_tokens, int64_t completion_tokens, double ttft_s, double e2e_s,
                              double queue_s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ModelCounts& m = models_[model];
    ++m.finish_reasons[finish_reason];
    m.prompt_tokens += prompt_tokens;
    m.completion_tokens += completion_tokens;
  }
  if (ttft_s >= 0) ttft_.Observe(ttft_s);
  e2e_.Observe(e2e_s);
  recent_.Add({prompt_tokens, completion_tokens, ttft_s, e2e_s});
  queue_.Observe(queue_s);
}

void Metrics::SetGaugeSource(std::function<std::vector<MetricSample>()> source) {
  std::lock_guard<std::mutex> lock(mu_);
  gauges_ = std::move(source);
}

std::string Metrics::Render() const {
  std::string out;
  std::map<std::pair<std::string, int>, uint64_t> requests;
  std::map<std::string, ModelCounts> models;
  std::function<std::vector<MetricSample>()> gauges;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests = requests_;
    models = models_;
    gauges = gauges_;
  }
  Header(&out, "ragd_http_requests_total", "counter", "HTTP requests by route and status code.");
  for (const auto& [key, n] : requests)
    out += "ragd_http_requests_total{route=\"" + key.first + "\",status=\"" + std::to_string(key.second) +
           "\"} " + std::to_string(n) + "\n";
  Header(&out, "ragd_http_request_duration_seconds", "histogram", "HTTP request latency, end to end.");
  request_latency_.Render("ragd_http_request_duration_seconds", "", &out);

  Header(&out, "ragd_generations_total", "counter", "Finished generations by model and finish reason.");
  for (const auto& [model, m] : models) {
    for (const auto& [reason, n] : m.finish_reasons)
      out += "ragd_generations_total{model=\"" + model + "\",finish_reason=\"" + reason + "\"} " +
             std::to_string(n) + "\n";
  }
  Header(&out, "ragd_prompt_tokens_total", "counter", "Prompt tokens processed, by language model.");
  for (const auto& [model, m] : models)
    out += "ragd_prompt_tokens_total{model=\"" + model + "\"} " + std::to_string(m.prompt_tokens) + "\n";
  Header(&out, "ragd_generation_tokens_total", "counter", "Tokens generated, by language model.");
  for (const auto& [model, m] : models)
    out +=
        "ragd_generation_tokens_total{model=\"" + model + "\"} " + std::to_string(m.completion_tokens) + "\n";
  Header(&out, "ragd_embedding_tokens_total", "counter", "Tokens embedded for /v1/embeddings.");
  out += "ragd_embedding_tokens_total " + std::to_string(embedding_tokens_.load()) + "\n";
  Header(&out, "ragd_quota_rejections_total", "counter",
         "Requests refused because the token quota was spent.");
  out += "ragd_quota_rejections_total " + std::to_string(quota_rejections_.load()) + "\n";
  Header(&out, "ragd_rate_limit_rejections_total", "counter",
         "Requests refused by the per-minute rate limits.");
  out += "ragd_rate_limit_rejections_total " + std::to_string(rate_limit_rejections_.load()) + "\n";
  Header(&out, "ragd_context_length_errors_total", "counter", "Prompts refused for exceeding the context.");
  out += "ragd_context_length_errors_total " + std::to_string(context_errors_.load()) + "\n";

  Header(&out, "ragd_time_to_first_token_seconds", "histogram",
         "Time from request to the first generated token.");
  ttft_.Render("ragd_time_to_first_token_seconds", "", &out);
  Header(&out, "ragd_inter_token_latency_seconds", "histogram", "Time between consecutive generated tokens.");
  itl_.Render("ragd_inter_token_latency_seconds", "", &out);
  Header(&out, "ragd_e2e_request_latency_seconds", "histogram", "Generation requests, end to end.");
  e2e_.Render("ragd_e2e_request_latency_seconds", "", &out);
  Header(&out, "ragd_request_queue_time_seconds", "histogram", "Time generation requests waited for a slot.");
  queue_.Render("ragd_request_queue_time_seconds", "", &out);
  Header(&out, "ragd_retrieval_latency_seconds", "histogram", "Hybrid search latency per question.");
  retrieval_.Render("ragd_retrieval_latency_seconds", "", &out);

  if (gauges) {
    std::vector<MetricSample> samples = gauges();
    // One HELP/TYPE header per name, its samples together (the exposition format asks for that).
    std::stable_sort(samples.begin(), samples.end(),
                     [](const MetricSample& a, const MetricSample& b) { return a.name < b.name; });
    for (size_t i = 0; i < samples.size(); ++i) {
      const MetricSample& m = samples[i];
      if (i == 0 || samples[i - 1].name != m.name)
        Header(&out, m.name.c_str(), m.counter ? "counter" : "gauge", m.help.c_str());
      out += m.name + (m.labels.empty() ? "" : "{" + m.labels + "}") + " " + Num(m.value) + "\n";
    }
  }
  return out;
}

}  // namespace ragd::app
