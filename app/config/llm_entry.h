// One entry of models.llm: either a local GGUF file, or a pool of
// OpenAI-compatible servers that generate for ragd (llama-server, vLLM,
// another ragd), written as a JSON object:
//
//   {"id": "qwen-pool",                           // served under this name (required)
//    "upstream": ["http://10.0.0.5:8080", "http://10.0.0.6:8080"],  // base URLs (required)
//    "model": "qwen2.5-coder-1.5b-instruct",      // model name sent upstream; default: id
//    "api_key_env": "QWEN_POOL_KEY",              // env variable with the bearer key; default: none
//    "concurrency": 4,                            // requests in flight per endpoint
//    "tokenizer": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"}   // required, see below
//
// The tokenizer file is the GGUF of the model the pool serves (its weights
// are not read): ragd formats prompts in the model's chat template and counts
// every token with the model's own vocabulary, as for a local model.
//
// In the config file the object is an item of the models.llm array; in the
// environment and on the command line it is written as JSON text among the
// comma-separated items (commas inside braces do not split).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ragd::app {

struct UpstreamPoolConfig {
  std::vector<std::string> urls;      // endpoints' base URLs; generation posts to <url>/v1/completions
  std::string model;                  // model name sent upstream
  std::string api_key_env;            // environment variable holding the bearer key; "" = none
  int64_t concurrency = 4;            // requests in flight per endpoint
  int64_t max_queue = 64;             // requests waiting for an endpoint before 503
  int64_t failures_to_open = 3;       // consecutive failures that open an endpoint's circuit
  int64_t health_interval_ms = 1000;  // how often each endpoint is probed (GET <url>/v1/models)
  int64_t connect_timeout_ms = 2000;  // connecting to an endpoint
  int64_t idle_timeout_ms = 60000;    // longest silence of a streaming endpoint before it counts as failed
  int64_t context_length = 0;         // tokens per sequence; 0 = inference.context_length capped by the model
};

struct LlmEntry {
  std::string id;                              // served under this name (a file: its name without .gguf)
  std::string path;                            // the GGUF file, resolved (a pool: its tokenizer file)
  std::optional<UpstreamPoolConfig> upstream;  // set for a pool
};

// The entry `text` of models.llm; `resolve` turns a file name into a path
// (models.dir applied). Errors name the field that is wrong.
Result<LlmEntry> ParseLlmEntry(const std::string& text,
                               const std::function<std::string(const std::string&)>& resolve);

// Whether `text` is written as a pool (a JSON object) rather than a file name.
bool IsPoolEntry(const std::string& text);

}  // namespace ragd::app
