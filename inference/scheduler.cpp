#include "inference/scheduler.h"

#include <algorithm>
#include <chrono>
#include <span>

#include "inference/kernels/kernels.h"
#include "inference/models/model.h"
#include "inference/sequence.h"

namespace ragd::inference {
namespace {

using Clock = std::chrono::steady_clock;

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string Mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  return buf;
}

}  // namespace

struct Scheduler::Job {
  std::unique_ptr<Sequence> seq;
  PrefixScope scope;  // the request's cache_scope and shared_prefix
  SchedulerCallback callback;
  CancelHandle cancel;
  size_t kv_bytes = 0;  // what its cache takes, counted against the budget from admission
  std::unique_ptr<KvCache> cache;
  GenerationStats stats;
  Clock::time_point queued_at, admitted_at, first_token_at;
  bool done = false;
  // This step's input: the tokens fed (a prefill chunk, or the last sampled
  // token followed by the draft) and the logits that come back (in the
  // model's buffer: read before the next step).
  std::vector<TokenId> fed;
  bool prefill = false;
  std::span<const float> logits;
  // Speculation: the proposed draft (cut to what the step takes), where each
  // of its tokens came from, and the n-gram counts of the sequence's first
  // `counted` tokens.
  std::vector<TokenId> draft;
  std::vector<DraftSource> draft_sources;
  NgramCounts ngrams;
  size_t counted = 0;
  // What sampling a decode step's logits gave (Sample): the chunks in order,
  // and why the sequence ended at the last one or what failed after it.
  std::vector<GenerationChunk> sampled;
  FinishReason sampled_reason = FinishReason::kNone;
  Status sampled_status;
};

Scheduler::Scheduler(Engine& engine, SchedulerOptions options)
    : engine_(engine),
      options_(options),
      prefix_(engine.model_->config(), options.prefix_cache),
      shared_(options.speculative ? options.draft.shared_answers : 0, options.draft.ngram_max) {
  options_.max_running = std::max(1, options_.max_running);
  options_.step_tokens = std::max(1, options_.step_tokens);
  options_.draft.max_draft = std::max(0, options_.draft.max_draft);
  gauges_.kv_budget_bytes = options_.kv_budget_bytes;
  thread_ = std::thread([this] { Loop(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

const SharedPhrasing* Scheduler::PhrasingFor(uint64_t scope) const {
  if (scope == 0) return &shared_;
  auto it = scoped_phrasing_.find(scope);
  return it == scoped_phrasing_.end() ? nullptr : &it->second;
}

SharedPhrasing& Scheduler::KeepPhrasing(uint64_t scope) {
  if (scope == 0) return shared_;
  auto it = scoped_phrasing_.find(scope);
  if (it != scoped_phrasing_.end()) {
    std::erase(scope_lru_, scope);
    scope_lru_.push_front(scope);
    return it->second;
  }
  // Each scope keeps fewer answers than the shared one, and only the most
  // recent scopes are kept, so the memory stays bounded however many users.
  constexpr size_t kMaxScopes = 32;
  if (scope_lru_.size() >= kMaxScopes) {
    scoped_phrasing_.erase(scope_lru_.back());
    scope_lru_.pop_back();
  }
  scope_lru_.push_front(scope);
  const int capacity = options_.speculative ? std::max(1, options_.draft.shared_answers / 8) : 0;
  return scoped_phrasing_.try_emplace(scope, capacity, options_.draft.ngram_max).first->second;
}

int64_t Scheduler::Spare() const { return options_.speculative ? options_.draft.max_draft : 0; }

Result<CancelHandle> Scheduler::Submit(const GenerationRequest& request, SchedulerCallback callback) {
  auto seq = Sequence::Create(request, *engine_.tokenizer_, engine_.context_length_,
                              request.grammar ? &engine_.grammar_vocabulary() : nullptr);
  if (!seq.ok()) return seq.status();
  auto job = std::make_unique<Job>();
  job->seq = std::move(seq).value();
  job->scope = {request.cache_scope, request.shared_prefix};
  job->ngrams = NgramCounts(options_.draft.ngram_max);
  job->kv_bytes = KvCache::BytesFor(engine_.model_->config(), job->seq->kv_capacity(), Spare());
  if (job->kv_bytes > options_.kv_budget_bytes) {
    return Status::InvalidArgument("the request needs " + Mib(job->kv_bytes) + " of KV cache (" +
                                   std::to_string(job->seq->prompt_tokens()) + " prompt tokens + up to " +
                                   std::to_string(job->seq->max_completion()) +
                                   " completion tokens), more than the server's whole budget of " +
                                   Mib(options_.kv_budget_bytes) + "; ask for fewer max_tokens");
  }
  job->callback = std::move(callback);
  job->stats.prompt_tokens = job->seq->prompt_tokens();
  job->queued_at = Clock::now();
  CancelHandle handle = job->cancel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Unavailable("server is shutting down");
    if (queue_.size() >= static_cast<size_t>(options_.max_queue)) {
      return Status::Unavailable("too many requests waiting (" + std::to_string(queue_.size()) +
                                 "); retry shortly");
    }
    queue_.push_back(std::move(job));
    gauges_.waiting = queue_.size();
  }
  cv_.notify_one();
  return handle;
}

SchedulerGauges Scheduler::gauges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gauges_;
}

void Scheduler::Loop() {
  // This thread computes alongside the pool's workers: same niceness.
  if (engine_.nice_ > 0) SetCurrentThreadNice(engine_.nice_);
  std::vector<std::unique_ptr<Job>> active;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !active.empty(); });
      if (stopping_) {
        for (auto& job : queue_) active.push_back(std::move(job));
        queue_.clear();
        for (auto& job : active) job->cancel.Cancel();
      }
    }
    Admit(active);
    for (auto& job : active)
      if (job->cancel.cancelled()) End(*job, FinishReason::kCancelled);
    std::erase_if(active, [](const std::unique_ptr<Job>& j) { return j->done; });
    if (!active.empty()) RunStep(active);
    std::erase_if(active, [](const std::unique_ptr<Job>& j) { return j->done; });

    std::lock_guard<std::mutex> lock(mu_);
    gauges_.running = active.size();
    gauges_.waiting = queue_.size();
    gauges_.kv_bytes = 0;
    for (const auto& job : active) gauges_.kv_bytes += job->kv_bytes;
    gauges_.prefix = prefix_.stats();
    if (stopping_ && active.empty() && queue_.empty()) return;
  }
}

// First come, first served: the head of the queue waits for KV memory rather
// than letting smaller requests behind it overtake it forever.
void Scheduler::Admit(std::vector<std::unique_ptr<Job>>& active) {
  std::vector<std::unique_ptr<Job>> admitted, cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& job : queue_)
      if (job->cancel.cancelled()) cancelled.push_back(std::move(job));
    std::erase(queue_, nullptr);
    size_t used = 0;
    for (const auto& job : active) used += job->kv_bytes;
    while (!queue_.empty() && active.size() + admitted.size() < static_cast<size_t>(options_.max_running)) {
      if (used + queue_.front()->kv_bytes > options_.kv_budget_bytes) break;
      used += queue_.front()->kv_bytes;
      admitted.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
  }
  for (auto& job : cancelled) End(*job, FinishReason::kCancelled);
  const auto now = Clock::now();
  for (auto& job : admitted) {
    job->admitted_at = now;
    job->stats.queue_ms = MsBetween(job->queued_at, now);
    job->cache = engine_.model_->NewCache(job->seq->kv_capacity(), Spare());
    // At least the last prompt token is computed: its logits give the first token.
    const auto prompt = job->seq->prompt();
    job->stats.cached_tokens = static_cast<int>(
        prefix_.Restore(prompt, static_cast<int64_t>(prompt.size()) - 1, job->cache.get(), job->scope));
    active.push_back(std::move(job));
  }
}

void Scheduler::RunStep(std::vector<std::unique_ptr<Job>>& active) {
  const ModelConfig& config = engine_.model_->config();
  int64_t budget = options_.step_tokens;
  std::vector<SequenceStep> steps;
  std::vector<Job*> in_step;
  // Decode rows first: every running stream gets its token each step, then
  // the draft tokens the step can afford.
  std::vector<Job*> decoding;
  for (auto& job : active) {
    if (job->cache->n_past() < job->seq->prompt_tokens()) continue;
    job->prefill = false;
    job->fed.assign(1, job->seq->tokens().back());
    job->draft.clear();
    job->draft_sources.clear();
    decoding.push_back(job.get());
  }
  const int n_decode = static_cast<int>(decoding.size());
  std::vector<DraftOffer> offers(n_decode);
  if (options_.speculative) {
    // Each job's draft from its own n-grams (the shared phrasing and the
    // acceptance classes are only read here), on the model's threads.
    engine_.RunOnThreads(n_decode, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) ProposeFor(*decoding[i], &offers[i]);
    });
  }
  const double row_cost = options_.draft_row_cost > 0 ? options_.draft_row_cost : step_cost_.RowCost();
  const std::vector<int> take =
      PlanDrafts(offers, n_decode, row_cost, static_cast<int>(std::max<int64_t>(n_decode, budget)));
  for (int i = 0; i < n_decode; ++i) {
    Job* job = decoding[i];
    job->draft.resize(take[i]);
    job->draft_sources.resize(take[i]);
    job->fed.insert(job->fed.end(), job->draft.begin(), job->draft.end());
    budget -= static_cast<int64_t>(job->fed.size());
    SequenceStep& st = steps.emplace_back();
    st.cache = job->cache.get();
    st.tokens = job->fed;
    st.all_logits = !job->draft.empty();
    st.logits_view = &job->logits;
    in_step.push_back(job);
  }
  // Then prompt chunks, oldest request first. A chunk leaves the blocks it
  // completes inside every sliding window, so the prefix cache can keep them.
  int64_t max_chunk = options_.step_tokens;
  if (config.sliding_window > 0)
    max_chunk =
        std::min<int64_t>(max_chunk, std::max<int64_t>(1, config.sliding_window - prefix_.block_tokens()));
  for (auto& job : active) {
    const int64_t n_prompt = job->seq->prompt_tokens();
    const int64_t n_past = job->cache->n_past();
    if (n_past >= n_prompt || budget <= 0) continue;
    const int64_t n = std::min({n_prompt - n_past, budget, max_chunk});
    const auto prompt = job->seq->prompt();
    job->prefill = true;
    job->fed.assign(prompt.begin() + n_past, prompt.begin() + n_past + n);
    job->draft.clear();
    budget -= n;
    SequenceStep& st = steps.emplace_back();
    st.cache = job->cache.get();
    st.tokens = job->fed;
    st.logits_view = n_past + n == n_prompt ? &job->logits : nullptr;
    in_step.push_back(job.get());
  }

  const auto started = Clock::now();
  const Status status = engine_.Forward(steps);
  const double step_ms = MsBetween(started, Clock::now());
  uint64_t n_tokens = 0;
  for (const SequenceStep& st : steps) n_tokens += st.tokens.size();
  if (!status.ok()) {
    for (Job* job : in_step) Fail(*job, status);
    return;
  }
  // Steps of decode rows only (every row with logits) calibrate the draft plan.
  if (static_cast<int>(steps.size()) == n_decode) step_cost_.Record(n_tokens, step_ms);
  // Sampling touches each job's own sequence only: the decode rows' tokens
  // are chosen on the model's threads, then handed out here in order.
  std::vector<Job*> sampling;
  for (Job* job : in_step)
    if (!job->prefill) sampling.push_back(job);
  engine_.RunOnThreads(static_cast<int64_t>(sampling.size()), [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) Sample(*sampling[i]);
  });
  for (Job* job : in_step) {
    if (job->prefill)
      AfterPrefill(*job);
    else
      AfterDecode(*job);
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++gauges_.steps;
  gauges_.step_tokens += n_tokens;
  gauges_.step_seconds += step_ms / 1000;
  gauges_.row_cost = step_cost_.RowCost();
}

void Scheduler::AfterPrefill(Job& job) {
  const auto prompt = job.seq->prompt();
  prefix_.Store(prompt, job.cache->n_past(), *job.cache, job.scope);
  if (job.cache->n_past() < static_cast<int64_t>(prompt.size())) return;
  FinishReason reason = FinishReason::kNone;
  auto chunk = job.seq->Step(job.logits, &reason);
  job.first_token_at = Clock::now();
  job.stats.prompt_ms = MsBetween(job.admitted_at, job.first_token_at);
  if (!chunk.ok()) return Fail(job, chunk.status());
  Emit(job, *chunk);
  if (reason != FinishReason::kNone) End(job, reason);
}

// Row i of the logits follows fed[i]. Row 0 gives the next token; while it
// equals draft token i the row after it is valid too.
void Scheduler::Sample(Job& job) const {
  const int64_t n_vocab = engine_.model_->config().n_vocab;
  job.sampled.clear();
  job.sampled_reason = FinishReason::kNone;
  job.sampled_status = Status();
  for (size_t i = 0; i < job.fed.size(); ++i) {
    auto chunk = job.seq->Step(job.logits.subspan(i * n_vocab, n_vocab), &job.sampled_reason);
    if (!chunk.ok()) {
      job.sampled_status = chunk.status();
      return;
    }
    job.sampled.push_back(std::move(chunk).value());
    if (job.sampled_reason != FinishReason::kNone) return;
    if (i + 1 == job.fed.size() || job.sampled.back().id != job.fed[i + 1]) return;
  }
}

// Every sampled token but the last was an accepted draft token.
void Scheduler::AfterDecode(Job& job) {
  const int64_t base = job.cache->n_past() - static_cast<int64_t>(job.fed.size());
  for (const GenerationChunk& chunk : job.sampled) Emit(job, chunk);
  if (!job.sampled_status.ok()) return Fail(job, job.sampled_status);
  const size_t accepted = job.sampled.size() - 1;
  if (job.sampled_reason != FinishReason::kNone) {
    CountDrafts(job, accepted);
    return End(job, job.sampled_reason);
  }
  // Keep the positions of the last token and the accepted drafts only.
  job.cache->Rewind(base + 1 + static_cast<int64_t>(accepted));
  acceptance_.Record(job.draft_sources, static_cast<int>(accepted));
  CountDrafts(job, accepted);
}

void Scheduler::ProposeFor(Job& job, DraftOffer* offer) const {
  // A draft token is worth proposing only if it could still be accepted.
  const int room = job.seq->max_completion() - job.seq->completion_tokens() - 1;
  const SharedPhrasing* shared = PhrasingFor(job.scope.scope);
  ProposeDraft(CountNgrams(job), job.ngrams, shared != nullptr && shared->answers() > 0 ? shared : nullptr,
               options_.draft, room, &job.draft, &job.draft_sources);
  double all_hold = 1;
  for (const DraftSource& source : job.draft_sources)
    offer->chance.push_back(all_hold *= acceptance_.chance(source));
}

std::span<const TokenId> Scheduler::CountNgrams(Job& job) const {
  const std::span<const TokenId> history = job.seq->tokens();
  for (size_t i = std::max<size_t>(job.counted, 1); i < history.size(); ++i)
    job.ngrams.Count(history.first(i), history[i]);
  job.counted = history.size();
  return history;
}

void Scheduler::CountDrafts(Job& job, size_t accepted) {
  if (job.draft.empty()) return;
  job.stats.draft_tokens += static_cast<int>(job.draft.size());
  job.stats.draft_accepted += static_cast<int>(accepted);
  std::lock_guard<std::mutex> lock(mu_);
  gauges_.draft_tokens += job.draft.size();
  gauges_.draft_accepted += accepted;
}

void Scheduler::Emit(Job& job, const GenerationChunk& chunk) {
  job.stats.completion_tokens = job.seq->completion_tokens();
  SchedulerEvent ev;
  ev.id = chunk.id;
  ev.text = chunk.text;
  ev.logprob = chunk.logprob;
  ev.top_logprobs = chunk.top_logprobs;
  if (!job.callback(ev)) job.cancel.Cancel();
}

void Scheduler::End(Job& job, FinishReason reason) {
  if (job.done) return;
  const auto now = Clock::now();
  if (job.first_token_at != Clock::time_point()) job.stats.decode_ms = MsBetween(job.first_token_at, now);
  job.stats.completion_tokens = job.seq->completion_tokens();
  if (options_.speculative) {
    const std::span<const TokenId> tokens = job.seq->tokens();
    const auto n_prompt = static_cast<size_t>(job.seq->prompt_tokens());
    KeepPhrasing(job.scope.scope).Add(tokens.first(n_prompt), tokens.subspan(n_prompt));
  }
  SchedulerEvent ev;
  ev.kind = SchedulerEvent::Kind::kDone;
  ev.finish_reason = reason;
  Close(job, std::move(ev));
}

void Scheduler::Fail(Job& job, const Status& status) {
  SchedulerEvent ev;
  ev.kind = SchedulerEvent::Kind::kError;
  ev.error = status;
  Close(job, std::move(ev));
}

void Scheduler::Close(Job& job, SchedulerEvent last) {
  last.stats = job.stats;
  job.callback(last);
  job.done = true;
  job.cache.reset();
}

}  // namespace ragd::inference
