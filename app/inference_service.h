// The bridge between HTTP threads and the language model: a bounded queue of
// generation requests served by one inference thread, which owns every
// running Generation and emits each request's tokens through that request's
// own callback.
//
// Until the batching scheduler lands, the inference thread interleaves the
// running generations one token at a time (round robin, first come first
// served for admission), so one long answer never starves the others.
//
// Thread-safety: Submit() from any thread. Callbacks run on the inference
// thread and must be quick (format and enqueue bytes); returning false from
// a callback cancels that request only, before its next token.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "inference/engine.h"

namespace ragd::app {

struct InferenceEvent {
  enum class Kind { kToken, kDone, kError };
  Kind kind = Kind::kToken;
  std::string text;                           // kToken: text completed by this token (may be empty)
  inference::FinishReason finish_reason{};    // kDone
  inference::GenerationStats stats;           // kDone and kError: counts so far
  double queue_ms = 0;                        // kDone: time spent waiting for a slot
  Status error;                               // kError
};

// Returns false to cancel the request (e.g. the client has gone).
using InferenceCallback = std::function<bool(const InferenceEvent&)>;

// Cancels one submitted request from any thread.
class InferenceTicket {
 public:
  void Cancel() { handle_.Cancel(); }
  bool cancelled() const { return handle_.cancelled(); }

 private:
  friend class InferenceService;
  inference::CancelHandle handle_;
};

struct InferenceServiceOptions {
  int max_running = 8;  // generations interleaved at once
  int max_queue = 64;   // waiting requests beyond which Submit refuses
};

class InferenceService {
 public:
  InferenceService(inference::Engine& engine, InferenceServiceOptions options);
  ~InferenceService();  // cancels everything and joins the thread

  // Validates and queues a request. kUnavailable when the queue is full;
  // other errors are the engine's validation (context length, bad ids...).
  // Exactly one kDone or kError event ends every accepted request.
  Result<std::shared_ptr<InferenceTicket>> Submit(const inference::GenerationRequest& request,
                                                  InferenceCallback callback);

  size_t running() const;
  size_t waiting() const;
  // KV-cache memory held by the running generations, in bytes.
  size_t kv_cache_bytes() const { return kv_bytes_.load(); }

 private:
  struct Job;
  void Loop();

  inference::Engine& engine_;
  InferenceServiceOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> queue_;  // GUARDED_BY(mu_)
  size_t running_ = 0;                      // GUARDED_BY(mu_)
  bool stopping_ = false;                   // GUARDED_BY(mu_)
  std::atomic<size_t> kv_bytes_{0};         // written by the inference thread
  std::thread thread_;
};

}  // namespace ragd::app
