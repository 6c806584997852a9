// Loading what answers questions, from the configuration: the language
// model, the embedding model and the corpus (document store and vector
// index). One path for the server and every command, so they open the same
// files the same way and fail with the same messages.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/config/config.h"
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
  std::string id;  // "qwen2.5-coder-1.5b-instruct-q4_k_m": the file name without .gguf
  std::unique_ptr<inference::Engine> engine;
};

struct Models {
  std::vector<LoadedLlm> llms;  // config.models.llm in order; empty without options.language_model
  std::shared_ptr<retrieval::Embedder> embedder;
  std::unique_ptr<retrieval::Retriever> retriever;
  std::string embedding_id;            // "all-MiniLM-L6-v2": the model folder's name
  retrieval::OpenReport index_report;  // what opening the vector index found
};

// Loads in order the language models, the embedding model, the corpus.
// Errors keep their code and say which failed ("cannot load the language
// model qwen2.5-coder-0.5b-instruct-q4_k_m: ...", "cannot load the embedding
// model: ..."); two files with one id are an error.
std::string LlmId(const std::string& path);
Result<Models> LoadModels(const Config& config, const ModelLoadOptions& options = {});

// One line on a vector index that was rebuilt or repaired when opened; ""
// when it was loaded as saved (or rebuilt empty).
std::string IndexRepairNote(const retrieval::OpenReport& report);

}  // namespace ragd::app
