// Everything a route handler or a request service may use, owned by
// RagServer. Models load on a background thread: until `ready` is true only
// the members above it may be used (routes that need models answer 503
// meanwhile).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accounts/accounts.h"
#include "app/config/config.h"
#include "app/http/work_pool.h"
#include "app/http/work_queue.h"
#include "app/ops/metrics.h"
#include "app/ops/request_log.h"
#include "app/services/ingest_jobs.h"
#include "app/upstream/pool.h"
#include "inference/engine.h"
#include "inference/generator.h"
#include "inference/scheduler.h"
#include "retrieval/embedder.h"
#include "retrieval/embedding_cache.h"
#include "retrieval/retriever.h"

namespace ragd::app {

// One language model the server answers with: its engine (the tokenizer,
// chat template and context prompts are built with) and what generates:
// its own batching loop (models run side by side, each batching its own
// requests) or a pool of upstream servers. Requests go to `generator` and
// do not know which.
struct LanguageModel {
  std::string id;  // served under this name: the file name without .gguf, or the pool's id
  std::unique_ptr<inference::Engine> engine;        // a pool's: vocabulary only
  std::unique_ptr<inference::Scheduler> scheduler;  // a local model's batching loop; null for a pool
  std::unique_ptr<inference::Generator> generator;  // answers: over `scheduler`, or the pool
  upstream::Pool* pool = nullptr;                   // the pool `generator` is, for its metrics; else null
};

struct AppContext {
  const std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
  Config config;
  std::string web_dir;                           // static files (chat, login, admin pages)
  std::unique_ptr<accounts::Accounts> accounts;  // opened before the port is bound
  Metrics metrics;
  std::unique_ptr<RequestLog> request_log;  // opened before the port is bound
  // Password hashing and checking (Argon2id, 64 MiB each) run here, never on
  // an HTTP thread; made before the port is bound.
  std::unique_ptr<WorkPool> password_pool;
  // RAG questions are answered from here: their translation and
  // answerability check wait for the models, which an HTTP thread must not.
  std::unique_ptr<WorkPool> rag_pool;

  // Set by the model loader before `ready` becomes true; read-only afterwards.
  std::vector<std::unique_ptr<LanguageModel>> llms;  // models.llm in order; the first answers RAG questions
  std::shared_ptr<retrieval::Embedder> embedder;
  std::unique_ptr<retrieval::Retriever> retriever;
  std::string embedding_id;                 // "all-MiniLM-L6-v2"
  std::unique_ptr<IngestJobs> ingest_jobs;  // uploads wait (bounded) and are ingested here, one at a time
  // The embeddings of attribution, cached (chunks recur across answers);
  // set with `attribution`.
  std::unique_ptr<retrieval::EmbeddingCache> attribution_embeddings;
  // RAG answers' citation attribution (sentence embeddings) runs here, off
  // the inference thread; null: answers are not attributed.
  std::unique_ptr<WorkQueue> attribution;

  std::atomic<bool> ready{false};
  std::atomic<bool> load_failed{false};
  // Set when the server is told to stop: /readyz answers 503 and routes that
  // would start work refuse it, while the requests already running finish.
  std::atomic<bool> draining{false};
  std::string load_error;  // written before load_failed is set
};

// The model served under `id`, or null.
LanguageModel* FindLlm(AppContext& ctx, std::string_view id);
// The model that answers RAG questions and requests that name none.
inline LanguageModel& DefaultLlm(AppContext& ctx) { return *ctx.llms.front(); }

// Counts a finished request in the metrics and writes its request-log line.
void RecordRequest(AppContext& ctx, const RequestRecord& record);

// A request's record with its ids and route; the rest is the caller's.
RequestRecord RequestRecordOf(const std::string& request_id, int64_t user_id, const std::string& route);

// Records a response sent after its handler returned, which the HTTP layer
// does not see: `record` (RequestRecordOf) with the status, the time now and
// the duration since `started`.
void RecordDeferred(AppContext& ctx, RequestRecord record, int status,
                    std::chrono::steady_clock::time_point started);

// The id of the RAG pseudo-model on the OpenAI-compatible routes.
inline constexpr const char* kRagModelId = "ragd-rag";

}  // namespace ragd::app
