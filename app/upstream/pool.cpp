#include "app/upstream/pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "app/upstream/completion_stream.h"
#include "app/upstream/http_client.h"

namespace ragd::app::upstream {
namespace {

using Clock = std::chrono::steady_clock;

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Statuses that say the endpoint is busy rather than broken: retried
// elsewhere, not counted against its circuit.
bool Busy(int status) { return status == 429 || status == 503; }

Status UpstreamStatus(int status, const std::string& who, const std::string& body) {
  std::string message = who + " answered " + std::to_string(status);
  if (!body.empty()) message += ": " + body.substr(0, 300);
  if (status == 400 || status == 404 || status == 422) return Status::InvalidArgument(message);
  if (status == 401 || status == 403) return Status::PermissionDenied(message);
  return Status::Unavailable(message);
}

}  // namespace

struct Pool::Job {
  inference::GenerationRequest request;
  inference::SchedulerCallback callback;
  inference::CancelHandle cancel;
  Clock::time_point queued, started;
  std::string text;  // what reached the caller
};

struct Pool::Endpoint {
  std::string url;
  int in_flight = 0;
  int failures_in_row = 0;
  bool open = false;
  uint64_t requests = 0, failures = 0, opens = 0;
};

// What one try on one endpoint came to.
struct Pool::Attempt {
  enum class End { kFinished, kCancelled, kFailed };
  End end = End::kFailed;
  bool endpoint_failed = false;  // counts against the endpoint's circuit
  bool retryable = false;        // another endpoint may answer (nothing was streamed yet)
  Status error;                  // kFailed
  std::string finish_reason;
  std::optional<UpstreamUsage> usage;
  Clock::time_point first_text{};
  bool streamed = false;  // a text delta reached the caller
};

Pool::Pool(PoolOptions options, const inference::Tokenizer& tokenizer)
    : options_(std::move(options)), tokenizer_(tokenizer) {
  for (const std::string& url : options_.urls) endpoints_.push_back(Endpoint{.url = url});
}

Result<std::unique_ptr<Pool>> Pool::Create(PoolOptions options, const inference::Tokenizer& tokenizer) {
  if (options.urls.empty())
    return Status::InvalidArgument("upstream pool " + options.id + " has no endpoint");
  std::unique_ptr<Pool> pool(new Pool(std::move(options), tokenizer));
  const size_t workers =
      pool->options_.urls.size() * static_cast<size_t>(std::max(1, pool->options_.concurrency));
  for (size_t i = 0; i < workers; ++i) pool->workers_.emplace_back([p = pool.get()] { p->Work(); });
  pool->prober_ = std::thread([p = pool.get()] { p->Probe(); });
  return pool;
}

Pool::~Pool() {
  std::deque<std::unique_ptr<Job>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left.swap(queue_);
  }
  work_cv_.notify_all();
  place_cv_.notify_all();
  probe_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  prober_.join();
  for (auto& job : left) {
    inference::SchedulerEvent done;
    done.kind = inference::SchedulerEvent::Kind::kDone;
    done.finish_reason = inference::FinishReason::kCancelled;
    job->callback(done);
  }
}

Result<inference::CancelHandle> Pool::Submit(const inference::GenerationRequest& request,
                                             inference::SchedulerCallback callback) {
  if (request.prompt.empty()) return Status::InvalidArgument("the prompt is empty");
  if (request.max_tokens < 1) return Status::InvalidArgument("max_tokens must be at least 1");
  auto job = std::make_unique<Job>();
  job->request = request;
  job->callback = std::move(callback);
  job->queued = Clock::now();
  inference::CancelHandle handle = job->cancel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Unavailable("the server is stopping");
    if (!AnyClosed()) return Unreachable();
    if (queue_.size() >= static_cast<size_t>(options_.max_queue))
      return Status::Unavailable("upstream pool " + options_.id + " has " + std::to_string(queue_.size()) +
                                 " requests waiting; try again shortly");
    queue_.push_back(std::move(job));
  }
  work_cv_.notify_one();
  return handle;
}

size_t Pool::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

bool Pool::AnyClosed() const {
  return std::any_of(endpoints_.begin(), endpoints_.end(), [](const Endpoint& e) { return !e.open; });
}

Status Pool::Health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return AnyClosed() ? Status::Ok() : Unreachable();
}

Status Pool::Unreachable() const {
  // The URLs stay out of the message: it reaches clients and /readyz.
  return Status::Unavailable("no endpoint of the upstream pool " + options_.id + " is reachable (" +
                             std::to_string(endpoints_.size()) +
                             " endpoints: see ragd_upstream_circuit_open" + ")");
}

PoolStats Pool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PoolStats s = counters_;
  s.waiting = queue_.size();
  for (const Endpoint& e : endpoints_)
    s.endpoints.push_back({e.url, e.open, e.in_flight, e.requests, e.failures, e.opens});
  return s;
}

void Pool::Work() {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Run(*job);
  }
}

int Pool::Acquire(const std::vector<int>& tried) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopping_) return -1;
    int best = -1;
    bool any_untried_closed = false;
    const size_t n = endpoints_.size();
    for (size_t k = 0; k < n; ++k) {
      const int i = static_cast<int>((next_ + k) % n);
      const Endpoint& e = endpoints_[i];
      if (e.open || std::find(tried.begin(), tried.end(), i) != tried.end()) continue;
      any_untried_closed = true;
      if (e.in_flight >= options_.concurrency) continue;
      if (best < 0 || e.in_flight < endpoints_[best].in_flight) best = i;
    }
    if (!any_untried_closed) return -1;
    if (best >= 0) {
      next_ = static_cast<size_t>(best) + 1;
      ++endpoints_[best].in_flight;
      ++endpoints_[best].requests;
      return best;
    }
    place_cv_.wait(lock);
  }
}

bool Pool::CountFailure(Endpoint& e) {
  ++e.failures;
  if (++e.failures_in_row < options_.failures_to_open || e.open) return false;
  e.open = true;
  ++e.opens;
  return true;
}

void Pool::Release(int endpoint, bool failed) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Endpoint& e = endpoints_[endpoint];
    --e.in_flight;
    if (failed) {
      CountFailure(e);
    } else {
      e.failures_in_row = 0;
    }
  }
  place_cv_.notify_all();
}

void Pool::Run(Job& job) {
  std::vector<int> tried;
  Attempt attempt;
  job.started = Clock::now();
  for (;;) {
    if (job.cancel.cancelled()) {
      attempt = Attempt{.end = Attempt::End::kCancelled};
      break;
    }
    const int endpoint = Acquire(tried);
    if (endpoint < 0) {
      bool stopping;
      {
        std::lock_guard<std::mutex> lock(mu_);
        stopping = stopping_;
      }
      if (stopping) {
        attempt = Attempt{.end = Attempt::End::kCancelled};
      } else if (tried.empty() || attempt.error.ok()) {
        attempt = Attempt{.end = Attempt::End::kFailed, .error = Health()};
        if (attempt.error.ok())
          attempt.error = Status::Unavailable("no endpoint of " + options_.id + " answered");
      }
      break;  // else: the last endpoint's own error stands
    }
    tried.push_back(endpoint);
    if (tried.size() > 1) {
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.retries;
    }
    attempt = Attempt{};
    Stream(endpoint, job, &attempt);
    Release(endpoint, attempt.endpoint_failed);
    if (attempt.end != Attempt::End::kFailed || !attempt.retryable || attempt.streamed) break;
  }
  Finish(job, attempt);
}

void Pool::Stream(int endpoint, Job& job, Attempt* attempt) {
  std::string url;
  {
    std::lock_guard<std::mutex> lock(mu_);
    url = endpoints_[endpoint].url;
  }
  // Errors name the endpoint by its place in the configuration, not its URL:
  // they reach the client.
  const std::string who = "upstream endpoint " + std::to_string(endpoint + 1) + " of " + options_.id;
  HttpCall call;
  call.url = url + "/v1/completions";
  call.headers = {"Content-Type: application/json", "Accept: text/event-stream"};
  if (!options_.api_key.empty()) call.headers.push_back("Authorization: Bearer " + options_.api_key);
  call.body = CompletionBody(options_.model, job.request);
  call.connect_timeout_ms = options_.connect_timeout_ms;
  call.idle_timeout_ms = options_.idle_timeout_ms;

  CompletionStream stream;
  bool cancelled = false;
  const auto on_text = [&](const std::string& delta) {
    if (!attempt->streamed) attempt->first_text = Clock::now();
    attempt->streamed = true;
    job.text += delta;
    inference::SchedulerEvent ev;
    ev.kind = inference::SchedulerEvent::Kind::kToken;
    ev.text = delta;
    if (!job.callback(ev)) {
      cancelled = true;
      job.cancel.Cancel();
    }
    return !cancelled;
  };
  auto result = Perform(
      call, [&](std::string_view bytes) { return stream.Feed(bytes, on_text); },
      [&] {
        std::lock_guard<std::mutex> lock(mu_);
        return stopping_ || job.cancel.cancelled();
      });
  attempt->usage = stream.usage();
  attempt->finish_reason = stream.finish_reason();
  if (cancelled || job.cancel.cancelled() || (result.ok() && result->stopped && stream.error().empty())) {
    attempt->end = Attempt::End::kCancelled;
    return;
  }
  if (!result.ok()) {  // transport: cannot connect, reset, timeout, cut short
    attempt->end = Attempt::End::kFailed;
    attempt->endpoint_failed = true;
    attempt->retryable = !attempt->streamed;
    attempt->error = Status::Unavailable(who + ": " + result.status().message());
    if (stream.finished()) attempt->end = Attempt::End::kFinished;  // cut after the answer ended
    return;
  }
  if (result->status < 200 || result->status >= 300) {
    attempt->end = Attempt::End::kFailed;
    attempt->error = UpstreamStatus(result->status, who, result->error_body);
    attempt->retryable = result->status >= 500 || Busy(result->status);
    attempt->endpoint_failed = result->status >= 500 && !Busy(result->status);
    return;
  }
  if (!stream.error().empty()) {
    attempt->end = Attempt::End::kFailed;
    const int status = stream.error_status();
    attempt->error = status > 0 && status < 500 ? UpstreamStatus(status, who, stream.error())
                                                : Status::Unavailable(who + ": " + stream.error());
    attempt->retryable = !attempt->streamed && (status == 0 || status >= 500);
    attempt->endpoint_failed = status == 0 || (status >= 500 && !Busy(status));
    return;
  }
  if (!stream.finished()) {
    attempt->end = Attempt::End::kFailed;
    attempt->endpoint_failed = true;
    attempt->retryable = !attempt->streamed;
    attempt->error = Status::Unavailable(who + " ended the answer without a finish reason");
    return;
  }
  attempt->end = Attempt::End::kFinished;
}

void Pool::Finish(Job& job, const Attempt& attempt) {
  const Clock::time_point now = Clock::now();
  inference::SchedulerEvent ev;
  inference::GenerationStats& s = ev.stats;
  // Nothing reached the caller: nothing was generated for it, nothing is charged.
  const bool charged = attempt.streamed || attempt.end == Attempt::End::kFinished;
  if (charged) {
    s.prompt_tokens = static_cast<int>(job.request.prompt.size());
    auto ids = tokenizer_.Encode(job.text);
    s.completion_tokens = ids.ok() ? static_cast<int>(ids->size()) : 0;
    // A local generation counts the end-of-turn token it sampled; so does an upstream.
    if (attempt.end == Attempt::End::kFinished && attempt.finish_reason == "stop") ++s.completion_tokens;
  }
  s.queue_ms = MsBetween(job.queued, job.started);
  if (attempt.streamed) {
    s.prompt_ms = MsBetween(job.started, attempt.first_text);
    s.decode_ms = MsBetween(attempt.first_text, now);
  }
  if (attempt.end == Attempt::End::kFinished && attempt.usage) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.usage_compared;
    const int64_t diff = std::llabs(attempt.usage->completion_tokens - s.completion_tokens) +
                         std::llabs(attempt.usage->prompt_tokens - s.prompt_tokens);
    if (diff != 0) {
      ++counters_.usage_mismatches;
      counters_.usage_mismatch_tokens += static_cast<uint64_t>(diff);
    }
  }
  switch (attempt.end) {
    case Attempt::End::kFinished:
      ev.kind = inference::SchedulerEvent::Kind::kDone;
      ev.finish_reason = attempt.finish_reason == "length" ? inference::FinishReason::kLength
                                                           : inference::FinishReason::kStop;
      break;
    case Attempt::End::kCancelled:
      ev.kind = inference::SchedulerEvent::Kind::kDone;
      ev.finish_reason = inference::FinishReason::kCancelled;
      break;
    case Attempt::End::kFailed:
      ev.kind = inference::SchedulerEvent::Kind::kError;
      ev.error = attempt.error.ok() ? Status::Unavailable("the upstream failed") : attempt.error;
      if (attempt.streamed) {
        std::lock_guard<std::mutex> lock(mu_);
        ++counters_.failed_mid_stream;
      }
      break;
  }
  job.callback(ev);
}

void Pool::Probe() {
  for (;;) {
    std::vector<std::string> urls;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_) return;
      for (const Endpoint& e : endpoints_) urls.push_back(e.url);
    }
    for (size_t i = 0; i < urls.size(); ++i) {
      HttpCall call;
      call.url = urls[i] + "/v1/models";
      if (!options_.api_key.empty()) call.headers.push_back("Authorization: Bearer " + options_.api_key);
      call.connect_timeout_ms = options_.connect_timeout_ms;
      call.total_timeout_ms = options_.connect_timeout_ms + options_.health_interval_ms;
      auto r = Perform(
          call, [](std::string_view) { return true; },
          [this] {
            std::lock_guard<std::mutex> lock(mu_);
            return stopping_;
          });
      const bool up = r.ok() && !r->stopped && r->status == 200;
      bool changed = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
        Endpoint& e = endpoints_[i];
        if (up) {
          changed = e.open;
          e.open = false;
          e.failures_in_row = 0;
        } else {
          changed = CountFailure(e);
        }
      }
      if (changed) place_cv_.notify_all();
    }
    std::unique_lock<std::mutex> lock(mu_);
    probe_cv_.wait_for(lock, std::chrono::milliseconds(options_.health_interval_ms),
                       [this] { return stopping_; });
    if (stopping_) return;
  }
}

}  // namespace ragd::app::upstream
