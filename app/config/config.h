// ragd's configuration: one struct per concern, defaults in the code, the
// documented default file in config/ragd.jsonc, and three layers of override.
//
// Precedence, lowest to highest: built-in defaults < config file (JSON with
// comments) < environment (RAGD_<KEY>, dots as underscores, upper case:
// server.port -> RAGD_SERVER_PORT) < command-line flags (--set key=value and
// the shortcuts --host, --port, --data). Unknown keys and wrong types are
// errors naming the key, never silently ignored.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "app/config/llm_entry.h"
#include "common/status.h"

namespace ragd::app {

struct ServerConfig {
  std::string host = "127.0.0.1";       // address to listen on
  int64_t port = 8080;                  // TCP port
  int64_t threads = 4;                  // HTTP reactor threads
  int64_t max_json_bytes = 1 << 20;     // largest JSON request body
  int64_t max_upload_bytes = 32 << 20;  // largest multipart upload request
  int64_t stream_timeout_s = 900;       // longest a streamed answer may take
  int64_t header_timeout_s = 30;        // a request's line and headers, on every request of a connection
  int64_t drain_timeout_s = 30;         // on SIGTERM/SIGINT: seconds running requests get to finish
  int64_t max_connections = 4096;       // open connections at most; more get 503 and are closed
  int64_t max_connections_per_address = 128;  // from one client address; 0 = no cap (behind a proxy: none)
  std::string web_dir;                        // browser pages; "" = beside the binary (app/server/web_dir.h)
  bool trust_proxy = false;                   // believe X-Forwarded-Proto/-Host/-For from the proxy in front
  std::string secure_cookies = "auto";        // "auto" (Secure behind a trusted TLS proxy), "always", "never"
  // Origins whose pages may call the API (CORS); "*" = any; none = off.
  std::vector<std::string> cors_origins;
  std::string metrics_token;  // "" = /metrics is public; else it needs Authorization: Bearer <token>
};

struct AuthConfig {
  int64_t hash_threads = 2;            // threads verifying passwords (64 MiB of Argon2id memory each)
  int64_t hash_queue = 16;             // sign-ins and password changes waiting for them before 503
  int64_t account_free_failures = 5;   // failed sign-ins per account name before backoff
  int64_t address_free_failures = 20;  // failed sign-ins per client address before backoff
  int64_t backoff_max_s = 300;         // longest wait imposed (doubling from 1 s)
};

struct ModelsConfig {
  std::string dir;  // model folder; "" = $RAGD_MODELS or ~/.cache/ragd/models
  // GGUF language models, relative to dir unless absolute; each is served
  // under its file name without ".gguf"; the first answers RAG questions.
  // An item may instead be a pool of upstream servers (llm_entry.h).
  std::vector<std::string> llm = {"qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                                  "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"};
  // "<model id>=<template>" overrides of the chat template a file names
  // (inference/tokenizer/chat_format.h: gemma, chatml, chatml-qwen, llama3, none).
  std::vector<std::string> chat_templates;
  std::string embedding = "all-MiniLM-L6-v2";  // folder with model.safetensors, config.json, vocab.txt
};

struct InferenceConfig {
  int64_t threads = 0;            // compute threads; 0 = one per core
  int64_t context_length = 8192;  // tokens per sequence (prompt + answer)
  int64_t max_tokens = 512;       // default answer length when a request gives none
  int64_t max_batch = 16;         // sequences decoded together
  int64_t max_queue = 64;         // waiting requests before 503
  int64_t step_tokens = 256;      // tokens per batched forward pass (decode rows, then prompt chunks)
  int64_t kv_cache_bytes = int64_t{512} << 20;    // KV memory of the running sequences at most
  int64_t prefix_cache_bytes = int64_t{1} << 30;  // KV kept for repeated prompt prefixes; 0 = off
  bool speculative = true;                        // prompt-lookup speculative decoding
  int64_t draft_tokens = 8;                       // draft tokens per sequence and step at most
  int64_t draft_shared_answers = 256;  // answers to distinct prompts whose common phrasing drafts; 0 = none
  int64_t compute_nice = 5;            // niceness of the compute threads: request handling preempts them
};

struct RetrievalConfig {
  int64_t top_k = 5;                      // passages given to the model
  int64_t chunk_tokens = 200;             // target chunk length, embedding tokens
  int64_t chunk_overlap = 30;             // tokens repeated between neighbouring chunks
  std::string index = "flat";             // "flat" (exact) or "hnsw" (large corpora)
  int64_t max_document_bytes = 20 << 20;  // largest accepted document
  // Uploads are extracted in a child process under these limits (corpus/extract_process.h).
  int64_t extract_cpu_seconds = 30;                 // CPU time per document
  int64_t extract_memory_bytes = int64_t{1} << 30;  // memory per document, above the child's start
  int64_t extract_timeout_s = 120;                  // wall-clock time per document
  int64_t max_extracted_bytes = 64 << 20;           // largest extracted text
  int64_t ingest_queue = 8;                         // uploads waiting for the ingester before 503
};

struct RagConfig {
  std::string fast_model;        // model id of "ragd-rag-fast"; "" = the second of models.llm
  int64_t fallback_waiting = 2;  // "ragd-rag" falls over to the fast model when this many wait; 0 = never
  // Retrieval found nothing relevant when the best passage's cosine is under
  // abstain_dense_below and no passage shares a word with the question (BM25
  // under abstain_lexical_below): ragd then says the documents do not say,
  // without generating (English searches only, translated ones included: the
  // embedding model is English-only). From the labelled set
  // (tests/data/rag_eval.jsonl).
  double abstain_dense_below = 0.15;
  double abstain_lexical_below = 0.5;
  // Before the answer model answers, it is asked whether the sources state
  // the answer (only a model of >= 1B parameters tuned to follow
  // instructions: AnswerabilityCheckSeparates); under this share of "yes"
  // ragd says the documents do not say (app/services/answerability.h); 0 =
  // never asked. From the labelled set.
  double abstain_answerability_below = 0.6;
  // A question in another language is searched in the English the fast
  // model translates it to (app/services/query_translation.h).
  bool translate_queries = true;
  // A follow-up of a few words is rewritten by the answer model into a
  // question that stands alone, then searched and answered
  // (app/services/follow_up.h).
  bool rewrite_follow_ups = true;
  // The best whole_sources passages are shown to the answer model whole; the
  // others as their excerpt of at most excerpt_bytes that speaks to the
  // question (retrieval/excerpt.h). A shorter prompt is a shorter prefill:
  // the time to the first word. 0 = every passage whole.
  int64_t whole_sources = 3;
  int64_t excerpt_bytes = 320;
};

struct QuotaConfig {
  int64_t tokens_per_period = 200000;  // default per-user token budget
  std::string period = "day";          // "day" or "month"
  int64_t requests_per_minute = 60;    // per-user request rate limit
  int64_t tokens_per_minute = 50000;   // per-user token rate limit
  int64_t max_in_flight = 8;           // per-user requests running or queued at once; 0 = unlimited
};

struct LogConfig {
  std::string file;             // request log (JSON lines); "" = <data_dir>/requests.jsonl
  bool content = false;         // also keep prompts and answers, encrypted (needs content_key)
  std::string content_key;      // 64 hex chars (32-byte secretbox key); set it through RAGD_LOG_CONTENT_KEY
  int64_t retention_days = 30;  // encrypted content older than this is deleted
};

// Where the shared state lives (docs/scale-out.md). Today: the accounts store.
struct StorageConfig {
  // A PostgreSQL database (postgresql:// URL or libpq "key=value" string) for
  // users, API keys, sessions, the usage ledger, rate limits, conversations
  // and the documents, shared by every replica pointed at it; "" =
  // <data_dir>/app.db and corpus.db (SQLite).
  std::string postgres_url;
};

struct Config {
  std::string data_dir = "data";  // everything the server writes: database, index, logs
  StorageConfig storage;
  ServerConfig server;
  ModelsConfig models;
  InferenceConfig inference;
  RetrievalConfig retrieval;
  RagConfig rag;
  QuotaConfig quota;
  AuthConfig auth;
  LogConfig log;

  // models.llm parsed, paths resolved (models.dir applied).
  Result<std::vector<LlmEntry>> LlmEntries() const;
  // Resolved paths of the model files (a pool: its tokenizer file); LlmPath() is the first LLM's.
  std::vector<std::string> LlmPaths() const;
  std::string LlmPath() const;
  std::string EmbeddingPath() const;
};

// One configurable key: its dotted name, a one-line description, and where it lives.
struct ConfigField {
  // A list is a JSON array of strings in a file, comma-separated in the
  // environment and on the command line.
  using Target = std::variant<std::string*, int64_t*, bool*, std::vector<std::string>*, double*>;
  std::string key;
  std::string help;
  std::function<Target(Config&)> target;
  std::string EnvName() const;  // RAGD_SERVER_PORT
};

// Every key, in the order of the default file.
const std::vector<ConfigField>& ConfigFields();

struct ConfigSources {
  std::optional<std::string> file;                             // --config FILE
  std::function<const char*(const char*)> getenv = nullptr;    // nullptr = no env layer
  std::vector<std::pair<std::string, std::string>> overrides;  // from the command line
};

// Builds the configuration from the given layers and checks ranges.
Result<Config> LoadConfig(const ConfigSources& sources);

// Applies one "key" = "value" override given as text (env or CLI).
Status SetConfigValue(Config& config, const std::string& key, const std::string& value);

}  // namespace ragd::app
