// Loading what answers questions, from the configuration: the language
// model, the embedding model and the corpus (document store and vector
// index). One path for the server and every command, so they open the same
// files the same way and fail with the same messages.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/config/config.h"
#include "app/ops/metrics.h"
#include "app/services/app_context.h"
#include "app/upstream/pool.h"
#include "inference/engine.h"
#include "retrieval/embedder.h"
#include "retrieval/retriever.h"

namespace ragd::app {

struct ModelLoadOptions {
  bool language_model = true;  // false: the embedder and the corpus only (search, ingest)
  // Embedding batches split over the engine's threads instead of OpenBLAS's
  // own (see EmbedderOptions::threads): for a server, which generates at the
  // same time. Needs language_model.
  bool share_engine_threads = false;
  bool bulk_ingest = false;  // commit documents without an fsync each (ragd ingest)
};

// One loaded language model and the id it is served under.
struct LoadedLlm {
  std::string id;  // "qwen2.5-coder-1.5b-instruct-q4_k_m": the file name without .gguf, or the pool's id
  std::unique_ptr<inference::Engine> engine;  // a pool's: its tokenizer file, vocabulary only
  // models.llm named a pool of upstream servers (config/llm_entry.h): how to
  // reach them; the pool itself starts with StartLanguageModel.
  std::optional<upstream::PoolOptions> upstream;
};

struct Models {
  std::vector<LoadedLlm> llms;  // config.models.llm in order; empty without options.language_model
  std::shared_ptr<retrieval::Embedder> embedder;
  std::unique_ptr<retrieval::Retriever> retriever;
  std::string embedding_id;            // "all-MiniLM-L6-v2": the model folder's name
  retrieval::OpenReport index_report;  // what opening the vector index found
};

// Loads in order the language models (a pool: its tokenizer, and the API
// key from the environment), the embedding model, the corpus.
// Errors keep their code and say which failed ("cannot load the language
// model qwen2.5-coder-0.5b-instruct-q4_k_m: ...", "cannot load the embedding
// model: ..."); two files with one id are an error.
std::string LlmId(const std::string& path);
Result<Models> LoadModels(const Config& config, const ModelLoadOptions& options = {});

// Makes `loaded` ready to answer: a local model gets its batching
// scheduler, a pool its workers and health prober (the endpoints need not
// be up yet: the pool finds them when they come).
Result<std::unique_ptr<LanguageModel>> StartLanguageModel(const Config& config, LoadedLlm loaded);

// The pool's counters and gauges of a model served by an upstream pool,
// labelled with its id (and each endpoint's URL); nothing for a local model.
void AppendUpstreamGauges(const LanguageModel& llm, std::vector<MetricSample>* out);

// One line on a vector index that was rebuilt or repaired when opened; ""
// when it was loaded as saved (or rebuilt empty).
std::string IndexRepairNote(const retrieval::OpenReport& report);

}  // namespace ragd::app
