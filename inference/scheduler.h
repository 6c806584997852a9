// Continuous batching: one inference thread serves every admitted request in
// the same forward passes.
//
// At each step the loop builds one batch: the next token of every running
// sequence (plus the prompt-lookup draft tokens the step can afford: fewer as
// the batch fills, see PlanDrafts, with the row cost measured from the steps
// run so far), then chunks of the prompts
// still being prefilled, first come first served, until the per-step token
// budget is spent. So a long prompt is prefilled over several steps while the
// running streams keep producing tokens, and the weight matrices are read once
// per step for all sequences. Sequences are admitted in arrival order while the
// KV-cache budget allows (a request that could never fit is refused at
// Submit), finish independently, and can be cancelled one by one. Prompt
// prefixes already computed come from the prefix cache (prefix_cache.h).
//
// Every request gets exactly what it would get alone (Generation): a
// sequence's rows in a batch do not depend on the other rows, drafts are
// checked against the token the sampler picks (same RNG draws), and the KV
// positions of rejected drafts are rewound.
//
// Thread-safety: Submit() and gauges() from any thread. Callbacks run on the
// inference thread and must be quick (format and enqueue bytes); a callback
// returning false cancels its own request before its next token.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "inference/engine.h"
#include "inference/prefix_cache.h"
#include "inference/prompt_lookup.h"

namespace ragd::inference {

struct SchedulerOptions {
  int max_running = 16;   // sequences in the batch at once
  int max_queue = 64;     // waiting requests beyond which Submit refuses
  int step_tokens = 256;  // tokens per forward pass: decode rows first, then prefill chunks
  size_t kv_budget_bytes = size_t{1} << 30;  // KV memory of the running sequences at most
  PrefixCacheOptions prefix_cache;           // reuse of computed prompt prefixes (max_bytes 0 = off)
  bool speculative = true;                   // prompt-lookup draft tokens, verified in the same step
  PromptLookupOptions draft;                 // how drafts are proposed
  // > 0: the draft plan's cost of one more row (relative to a step's fixed
  // cost) is this, not the one measured from the steps' wall time, so the
  // plan does not depend on how busy the machine is.
  double draft_row_cost = 0;
};

struct SchedulerEvent {
  enum class Kind { kToken, kDone, kError };
  Kind kind = Kind::kToken;
  TokenId id = -1;                         // kToken: the token
  std::string text;                        // kToken: text completed by this token (may be empty)
  float logprob = 0;                       // kToken, when requested: the token's log-probability
  std::vector<TokenLogprob> top_logprobs;  // kToken, when requested: the most likely tokens
  FinishReason finish_reason{};            // kDone
  GenerationStats stats;                   // kDone and kError: counts and times so far
  Status error;                            // kError
};

// Returns false to cancel the request (e.g. the client has gone).
using SchedulerCallback = std::function<bool(const SchedulerEvent&)>;

// A snapshot of the scheduler's state, for metrics.
struct SchedulerGauges {
  size_t running = 0;           // sequences admitted
  size_t waiting = 0;           // requests queued
  size_t kv_bytes = 0;          // KV memory held by the running sequences
  size_t kv_budget_bytes = 0;   // the configured budget
  PrefixCacheStats prefix;      // prefix-cache use since start
  uint64_t steps = 0;           // forward passes run
  uint64_t step_tokens = 0;     // tokens computed in them
  double step_seconds = 0;      // time spent in them
  double row_cost = 0;          // what one more decode row costs, relative to a step's fixed cost
  uint64_t draft_tokens = 0;    // speculative tokens proposed
  uint64_t draft_accepted = 0;  // of which accepted
};

class Scheduler {
 public:
  // `engine` must outlive the scheduler; its model is used only by the
  // scheduler's thread (and Generations, serialized with it).
  Scheduler(Engine& engine, SchedulerOptions options);
  ~Scheduler();  // cancels everything (each request still gets its kDone) and joins
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Validates and queues a request. kUnavailable when the queue is full or the
  // scheduler is stopping; kInvalidArgument when the request's KV cache would
  // exceed the whole budget; other errors are Engine::Start's validation.
  // Exactly one kDone or kError event ends every accepted request.
  Result<CancelHandle> Submit(const GenerationRequest& request, SchedulerCallback callback);

  SchedulerGauges gauges() const;
  const SchedulerOptions& options() const { return options_; }

 private:
  struct Job;
  void Loop();
  void Admit(std::vector<std::unique_ptr<Job>>& active);
  void RunStep(std::vector<std::unique_ptr<Job>>& active);
  void AfterPrefill(Job& job);
  void Sample(Job& job) const;  // a decode step's tokens, into job.sampled; any thread
  void AfterDecode(Job& job);
  // The job's draft and the chances of its tokens; any thread (reads shared_ and acceptance_).
  void ProposeFor(Job& job, DraftOffer* offer) const;
  // Brings the job's n-gram counts up to date; returns its tokens.
  std::span<const TokenId> CountNgrams(Job& job) const;
  void CountDrafts(Job& job, size_t accepted);  // into the job's stats and the gauges
  void Emit(Job& job, const GenerationChunk& chunk);
  void End(Job& job, FinishReason reason);
  void Fail(Job& job, const Status& status);
  void Close(Job& job, SchedulerEvent last);  // the job's last event; frees its cache
  int64_t Spare() const;                      // KV slots a sliding layer keeps beyond its window
  // The draft phrasing of a cache scope (GenerationRequest::cache_scope):
  // the shared one for scope 0, else the scope's own (null when it has none).
  const SharedPhrasing* PhrasingFor(uint64_t scope) const;
  SharedPhrasing& KeepPhrasing(uint64_t scope);  // created on first use; loop thread only

  Engine& engine_;
  SchedulerOptions options_;
  PrefixCache prefix_;       // loop thread only
  StepCostModel step_cost_;  // loop thread only: what a decode row costs, for the draft plan
  SharedPhrasing shared_;    // loop thread only: earlier answers' common phrasing, for drafts
  // Loop thread only: the phrasing of each recent scope's own answers, most
  // recently used scope first in scope_lru_.
  std::unordered_map<uint64_t, SharedPhrasing> scoped_phrasing_;
  std::list<uint64_t> scope_lru_;
  DraftAcceptance acceptance_;  // loop thread only: what each source's draft tokens are worth

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> queue_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                   // GUARDED_BY(mu_)
  SchedulerGauges gauges_;                  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace ragd::inference
