// A pool of OpenAI-compatible servers (llama-server, vLLM, another ragd)
// that generates for one model, behind the same Generator contract as the
// local batching loop (inference/generator.h): ragd still builds and counts
// the prompt, admits and charges; the pool only infers.
//
// - Balancing: a request goes to the endpoint with the fewest requests in
//   flight (ties in turn) among those whose circuit is closed and that have
//   a free place (`concurrency` each); others wait in a queue (`max_queue`).
// - Failures: cannot connect, a 5xx, a stream cut short or silent for
//   idle_timeout_ms. `failures_to_open` in a row open the endpoint's circuit:
//   it gets no requests until a health probe (GET <url>/v1/models, every
//   health_interval_ms, on every endpoint) answers 200, which closes it.
// - Retries: a request whose endpoint failed before the first text delta
//   reached the caller is sent to another endpoint (each tried once); after
//   the first delta it is never retried (the client would get text twice and
//   be charged twice): it ends with kError, counting what was streamed.
// - Cancellation: a callback returning false, the CancelHandle, or the pool's
//   destruction closes the upstream connection, which the server sees as a
//   client that left.
// - Counting: completion tokens are counted by `tokenizer` on the text
//   streamed (plus the end-of-turn token of an answer that stopped by
//   itself), the prompt is the request's ids; when the upstream's usage block
//   arrives the counts are compared and a difference is counted in stats().
//
// Thread-safety: every public method from any thread. Callbacks run on the
// pool's worker threads, one request at a time per worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "inference/generator.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::app::upstream {

struct PoolOptions {
  std::string id;                     // the model id ragd serves (for messages)
  std::vector<std::string> urls;      // endpoints' base URLs, without a trailing slash
  std::string model;                  // model name sent upstream
  std::string api_key;                // bearer key sent to every endpoint; "" = none
  int concurrency = 4;                // requests in flight per endpoint
  int max_queue = 64;                 // requests waiting for an endpoint beyond which Submit refuses
  int failures_to_open = 3;           // consecutive failures that open an endpoint's circuit
  int64_t health_interval_ms = 1000;  // probe period of every endpoint
  int64_t connect_timeout_ms = 2000;
  int64_t idle_timeout_ms = 60000;  // longest silence of an answering endpoint
};

struct EndpointStats {
  std::string url;
  bool open = false;           // circuit open: no requests go there
  int64_t in_flight = 0;       // requests streaming from it now
  uint64_t requests = 0;       // attempts sent to it
  uint64_t failures = 0;       // attempts and probes that failed
  uint64_t circuit_opens = 0;  // times its circuit opened
};

struct PoolStats {
  std::vector<EndpointStats> endpoints;
  size_t waiting = 0;                  // requests queued for an endpoint
  uint64_t retries = 0;                // requests sent again to another endpoint before their first delta
  uint64_t failed_mid_stream = 0;      // requests ended by an endpoint failing after their first delta
  uint64_t usage_compared = 0;         // answers whose upstream usage block was compared with ragd's count
  uint64_t usage_mismatches = 0;       // of which the counts differed
  uint64_t usage_mismatch_tokens = 0;  // summed absolute differences
};

class Pool final : public inference::Generator {
 public:
  // Starts the workers and the health prober. `tokenizer` (the served
  // model's) must outlive the pool. kInvalidArgument without an endpoint.
  static Result<std::unique_ptr<Pool>> Create(PoolOptions options, const inference::Tokenizer& tokenizer);
  // Cancels every request (each still gets its last event) and joins.
  ~Pool() override;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // kUnavailable when the queue is full or every endpoint's circuit is open.
  Result<inference::CancelHandle> Submit(const inference::GenerationRequest& request,
                                         inference::SchedulerCallback callback) override;
  size_t waiting() const override;
  Status Health() const override;

  PoolStats stats() const;
  const PoolOptions& options() const { return options_; }

 private:
  struct Job;
  struct Endpoint;
  struct Attempt;
  Pool(PoolOptions options, const inference::Tokenizer& tokenizer);
  void Work();
  void Probe();
  void Run(Job& job);
  // The endpoint a job tries next, not among `tried`: waits for a free place;
  // -1 when every untried endpoint's circuit is open, or when stopping.
  int Acquire(const std::vector<int>& tried);
  void Release(int endpoint, bool failed);
  void Stream(int endpoint, Job& job, Attempt* attempt);
  void Finish(Job& job, const Attempt& attempt);
  bool AnyClosed() const;          // REQUIRES(mu_)
  Status Unreachable() const;      // REQUIRES(mu_): every circuit is open
  bool CountFailure(Endpoint& e);  // REQUIRES(mu_); true when it opened the circuit

  const PoolOptions options_;
  const inference::Tokenizer& tokenizer_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;         // a job queued, or stopping
  std::condition_variable place_cv_;        // an endpoint place freed or a circuit changed
  std::condition_variable probe_cv_;        // stopping (wakes the prober)
  std::deque<std::unique_ptr<Job>> queue_;  // GUARDED_BY(mu_)
  std::vector<Endpoint> endpoints_;         // GUARDED_BY(mu_)
  PoolStats counters_;                      // GUARDED_BY(mu_); endpoints and waiting filled by stats()
  size_t next_ = 0;                         // GUARDED_BY(mu_): where ties start, for turns
  bool stopping_ = false;                   // GUARDED_BY(mu_)
  std::vector<std::thread> workers_;
  std::thread prober_;
};

}  // namespace ragd::app::upstream
