#include "app/config/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/text.h"

namespace ragd::app {
namespace {

using nlohmann::json;

std::string ModelsDir(const Config& c) {
  if (!c.models.dir.empty()) return c.models.dir;
  if (const char* env = std::getenv("RAGD_MODELS"); env != nullptr && *env != '\0') return env;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/ragd/models";
}

std::string Resolve(const Config& c, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  return ModelsDir(c) + "/" + path;
}

#define RAGD_FIELD(key, help, member)                                     \
  ConfigField {                                                           \
    key, help, [](Config& c) -> ConfigField::Target { return &c.member; } \
  }

const ConfigField* FindField(const std::string& key) {
  for (const ConfigField& f : ConfigFields())
    if (f.key == key) return &f;
  return nullptr;
}

Status SetFromJson(Config& config, const ConfigField& field, const json& v) {
  ConfigField::Target t = field.target(config);
  if (auto* s = std::get_if<std::string*>(&t)) {
    if (!v.is_string()) return Status::InvalidArgument("config key '" + field.key + "' must be a string");
    **s = v.get<std::string>();
  } else if (auto* b = std::get_if<bool*>(&t)) {
    if (!v.is_boolean())
      return Status::InvalidArgument("config key '" + field.key + "' must be true or false");
    **b = v.get<bool>();
  } else if (auto* list = std::get_if<std::vector<std::string>*>(&t)) {
    const auto bad =
        Status::InvalidArgument("config key '" + field.key + "' must be a string or a list of strings");
    if (v.is_string()) {
      **list = {v.get<std::string>()};
      return Status::Ok();
    }
    if (!v.is_array()) return bad;
    (*list)->clear();
    for (const json& item : v) {
      // An object is kept as its JSON text (a models.llm pool, llm_entry.h).
      if (item.is_object()) {
        (*list)->push_back(item.dump());
        continue;
      }
      if (!item.is_string()) return bad;
      (*list)->push_back(item.get<std::string>());
    }
  } else if (auto* d = std::get_if<double*>(&t)) {
    if (!v.is_number()) return Status::InvalidArgument("config key '" + field.key + "' must be a number");
    **d = v.get<double>();
  } else {
    if (!v.is_number_integer())
      return Status::InvalidArgument("config key '" + field.key + "' must be an integer");
    *std::get<int64_t*>(t) = v.get<int64_t>();
  }
  return Status::Ok();
}

Status ApplyJson(Config& config, const json& node, const std::string& prefix, const std::string& origin) {
  for (auto& [name, value] : node.items()) {
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    const ConfigField* field = FindField(key);
    if (field == nullptr && value.is_object()) {
      RAGD_RETURN_IF_ERROR(ApplyJson(config, value, key, origin));
      continue;
    }
    if (field == nullptr) return Status::InvalidArgument(origin + ": unknown config key '" + key + "'");
    Status st = SetFromJson(config, *field, value);
    if (!st.ok()) return Status::InvalidArgument(origin + ": " + st.message());
  }
  return Status::Ok();
}

Status Validate(const Config& c) {
  const auto range = [](const std::string& key, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      return Status::InvalidArgument("config key '" + key + "' must be between " + std::to_string(lo) +
                                     " and " + std::to_string(hi) + " (got " + std::to_string(v) + ")");
    return Status::Ok();
  };
  RAGD_RETURN_IF_ERROR(range("server.port", c.server.port, 0, 65535));
  RAGD_RETURN_IF_ERROR(range("server.threads", c.server.threads, 1, 256));
  RAGD_RETURN_IF_ERROR(range("server.max_json_bytes", c.server.max_json_bytes, 1024, int64_t{1} << 30));
  RAGD_RETURN_IF_ERROR(range("server.max_upload_bytes", c.server.max_upload_bytes, 1024, int64_t{4} << 30));
  RAGD_RETURN_IF_ERROR(range("server.stream_timeout_s", c.server.stream_timeout_s, 1, 86400));
  RAGD_RETURN_IF_ERROR(range("server.header_timeout_s", c.server.header_timeout_s, 1, 3600));
  RAGD_RETURN_IF_ERROR(range("server.drain_timeout_s", c.server.drain_timeout_s, 0, 86400));
  RAGD_RETURN_IF_ERROR(range("server.max_connections", c.server.max_connections, 1, 1 << 20));
  RAGD_RETURN_IF_ERROR(
      range("server.max_connections_per_address", c.server.max_connections_per_address, 0, 1 << 20));
  if (c.server.secure_cookies != "auto" && c.server.secure_cookies != "always" &&
      c.server.secure_cookies != "never")
    return Status::InvalidArgument(
        "config key 'server.secure_cookies' must be \"auto\", \"always\" or \"never\"");
  RAGD_RETURN_IF_ERROR(range("auth.hash_threads", c.auth.hash_threads, 1, 64));
  RAGD_RETURN_IF_ERROR(range("auth.hash_queue", c.auth.hash_queue, 0, 100000));
  RAGD_RETURN_IF_ERROR(range("auth.account_free_failures", c.auth.account_free_failures, 0, 1000000));
  RAGD_RETURN_IF_ERROR(range("auth.address_free_failures", c.auth.address_free_failures, 0, 1000000));
  RAGD_RETURN_IF_ERROR(range("auth.backoff_max_s", c.auth.backoff_max_s, 1, 86400));
  RAGD_RETURN_IF_ERROR(range("inference.threads", c.inference.threads, 0, 256));
  RAGD_RETURN_IF_ERROR(range("inference.context_length", c.inference.context_length, 16, 1 << 20));
  RAGD_RETURN_IF_ERROR(range("inference.max_tokens", c.inference.max_tokens, 1, 1 << 20));
  RAGD_RETURN_IF_ERROR(range("inference.max_batch", c.inference.max_batch, 1, 256));
  RAGD_RETURN_IF_ERROR(range("inference.max_queue", c.inference.max_queue, 0, 1 << 20));
  RAGD_RETURN_IF_ERROR(range("inference.step_tokens", c.inference.step_tokens, 1, 1 << 16));
  RAGD_RETURN_IF_ERROR(
      range("inference.kv_cache_bytes", c.inference.kv_cache_bytes, 1 << 20, int64_t{1} << 40));
  RAGD_RETURN_IF_ERROR(
      range("inference.prefix_cache_bytes", c.inference.prefix_cache_bytes, 0, int64_t{1} << 40));
  RAGD_RETURN_IF_ERROR(range("inference.draft_tokens", c.inference.draft_tokens, 1, 64));
  RAGD_RETURN_IF_ERROR(range("inference.draft_shared_answers", c.inference.draft_shared_answers, 0, 1 << 16));
  RAGD_RETURN_IF_ERROR(range("inference.compute_nice", c.inference.compute_nice, 0, 19));
  RAGD_RETURN_IF_ERROR(range("retrieval.top_k", c.retrieval.top_k, 1, 100));
  RAGD_RETURN_IF_ERROR(range("retrieval.chunk_tokens", c.retrieval.chunk_tokens, 16, 510));
  RAGD_RETURN_IF_ERROR(
      range("retrieval.chunk_overlap", c.retrieval.chunk_overlap, 0, c.retrieval.chunk_tokens - 1));
  RAGD_RETURN_IF_ERROR(
      range("retrieval.max_document_bytes", c.retrieval.max_document_bytes, 1, int64_t{4} << 30));
  RAGD_RETURN_IF_ERROR(range("retrieval.extract_cpu_seconds", c.retrieval.extract_cpu_seconds, 1, 3600));
  RAGD_RETURN_IF_ERROR(
      range("retrieval.extract_memory_bytes", c.retrieval.extract_memory_bytes, 16 << 20, int64_t{1} << 40));
  RAGD_RETURN_IF_ERROR(range("retrieval.extract_timeout_s", c.retrieval.extract_timeout_s, 1, 86400));
  RAGD_RETURN_IF_ERROR(
      range("retrieval.max_extracted_bytes", c.retrieval.max_extracted_bytes, 1024, int64_t{4} << 30));
  RAGD_RETURN_IF_ERROR(range("retrieval.ingest_queue", c.retrieval.ingest_queue, 0, 1 << 16));
  RAGD_RETURN_IF_ERROR(range("rag.fallback_waiting", c.rag.fallback_waiting, 0, 1 << 20));
  RAGD_RETURN_IF_ERROR(range("rag.whole_sources", c.rag.whole_sources, 0, 100));
  RAGD_RETURN_IF_ERROR(range("rag.excerpt_bytes", c.rag.excerpt_bytes, 1, 1 << 20));
  if (!(c.rag.abstain_answerability_below >= 0 && c.rag.abstain_answerability_below <= 1))
    return Status::InvalidArgument("config key 'rag.abstain_answerability_below' must be between 0 and 1");
  RAGD_RETURN_IF_ERROR(range("quota.tokens_per_period", c.quota.tokens_per_period, 0, int64_t{1} << 50));
  RAGD_RETURN_IF_ERROR(range("quota.requests_per_minute", c.quota.requests_per_minute, 0, 1 << 30));
  RAGD_RETURN_IF_ERROR(range("quota.tokens_per_minute", c.quota.tokens_per_minute, 0, int64_t{1} << 50));
  RAGD_RETURN_IF_ERROR(range("quota.max_in_flight", c.quota.max_in_flight, 0, 1 << 20));
  if (c.retrieval.index != "flat" && c.retrieval.index != "hnsw")
    return Status::InvalidArgument("config key 'retrieval.index' must be \"flat\" or \"hnsw\"");
  if (c.quota.period != "day" && c.quota.period != "month")
    return Status::InvalidArgument("config key 'quota.period' must be \"day\" or \"month\"");
  if (c.data_dir.empty()) return Status::InvalidArgument("config key 'data_dir' must not be empty");
  if (const std::string& url = c.storage.postgres_url; !url.empty()) {
    // libpq reads a URL or "key=value" pairs; anything else is a typo. The
    // value may hold a password, so the message does not repeat it.
    const bool form = url.starts_with("postgresql://") || url.starts_with("postgres://") ||
                      url.find('=') != std::string::npos;
    const bool control = std::any_of(
        url.begin(), url.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7F; });
    if (!form || control)
      return Status::InvalidArgument(
          "config key 'storage.postgres_url' must be a postgresql:// URL or libpq key=value pairs");
  }
  if (c.models.llm.empty())
    return Status::InvalidArgument("config key 'models.llm' must name at least one model");
  if (auto entries = c.LlmEntries(); !entries.ok()) return entries.status();
  for (const std::string& t : c.models.chat_templates) {
    if (t.find('=') == std::string::npos || t.front() == '=')
      return Status::InvalidArgument("config key 'models.chat_templates': \"" + t +
                                     "\" is not \"<model id>=<template>\"");
  }
  RAGD_RETURN_IF_ERROR(range("log.retention_days", c.log.retention_days, 1, 36500));
  if (!c.log.content_key.empty() &&
      (c.log.content_key.size() != 64 ||
       c.log.content_key.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos))
    return Status::InvalidArgument("config key 'log.content_key' must be 64 hexadecimal characters");
  if (c.log.content && c.log.content_key.empty())
    return Status::InvalidArgument(
        "config key 'log.content' needs 'log.content_key' (set RAGD_LOG_CONTENT_KEY)");
  return Status::Ok();
}

}  // namespace

Result<std::vector<LlmEntry>> Config::LlmEntries() const {
  std::vector<LlmEntry> out;
  for (const std::string& f : models.llm) {
    auto e = ParseLlmEntry(f, [this](const std::string& path) { return Resolve(*this, path); });
    if (!e.ok()) return e.status();
    out.push_back(std::move(e).value());
  }
  return out;
}
std::vector<std::string> Config::LlmPaths() const {
  std::vector<std::string> out;
  for (const std::string& f : models.llm) {
    auto e = ParseLlmEntry(f, [this](const std::string& path) { return Resolve(*this, path); });
    out.push_back(e.ok() ? e->path : Resolve(*this, f));
  }
  return out;
}
std::string Config::LlmPath() const { return models.llm.empty() ? "" : LlmPaths().front(); }
std::string Config::EmbeddingPath() const { return Resolve(*this, models.embedding); }

std::string ConfigField::EnvName() const {
  std::string env = "RAGD_";
  for (char ch : key)
    env += ch == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return env;
}

const std::vector<ConfigField>& ConfigFields() {
  static const std::vector<ConfigField> kFields = {
      RAGD_FIELD("data_dir", "folder for everything the server writes", data_dir),
      RAGD_FIELD("storage.postgres_url",
                 "PostgreSQL database for the accounts and the documents (libpq URL); empty = SQLite files",
                 storage.postgres_url),
      RAGD_FIELD("server.host", "address to listen on", server.host),
      RAGD_FIELD("server.port", "TCP port", server.port),
      RAGD_FIELD("server.threads", "HTTP reactor threads", server.threads),
      RAGD_FIELD("server.max_json_bytes", "largest JSON request body", server.max_json_bytes),
      RAGD_FIELD("server.max_upload_bytes", "largest multipart upload request", server.max_upload_bytes),
      RAGD_FIELD("server.stream_timeout_s", "longest a streamed answer may take", server.stream_timeout_s),
      RAGD_FIELD("server.header_timeout_s", "seconds for a request's line and headers, every request",
                 server.header_timeout_s),
      RAGD_FIELD(
          "server.drain_timeout_s",
          "on SIGTERM/SIGINT, seconds the running requests may take to finish before they are cancelled",
          server.drain_timeout_s),
      RAGD_FIELD("server.max_connections", "open connections at most", server.max_connections),
      RAGD_FIELD("server.max_connections_per_address", "open connections from one address; 0 = no cap",
                 server.max_connections_per_address),
      RAGD_FIELD("server.web_dir", "browser pages; empty = those installed beside the binary",
                 server.web_dir),
      RAGD_FIELD("server.trust_proxy", "believe X-Forwarded-Proto/-Host/-For from a proxy in front",
                 server.trust_proxy),
      RAGD_FIELD("server.secure_cookies", "Secure session cookie: auto, always or never",
                 server.secure_cookies),
      RAGD_FIELD("server.cors_origins",
                 "origins whose pages may call the API (CORS), \"*\" for any; empty = off",
                 server.cors_origins),
      RAGD_FIELD("server.metrics_token", "bearer token /metrics asks for; empty = public",
                 server.metrics_token),
      RAGD_FIELD("models.dir", "model folder; empty = $RAGD_MODELS or ~/.cache/ragd/models", models.dir),
      RAGD_FIELD("models.llm",
                 "GGUF language models, relative to models.dir, or upstream pools (JSON objects); the first "
                 "answers RAG questions",
                 models.llm),
      RAGD_FIELD("models.chat_templates", "chat template overrides, \"<model id>=<template>\"",
                 models.chat_templates),
      RAGD_FIELD("models.embedding", "embedding model folder, relative to models.dir", models.embedding),
      RAGD_FIELD("inference.threads", "compute threads; 0 = one per core", inference.threads),
      RAGD_FIELD("inference.context_length", "tokens per sequence, prompt and answer",
                 inference.context_length),
      RAGD_FIELD("inference.max_tokens", "default answer length in tokens", inference.max_tokens),
      RAGD_FIELD("inference.max_batch", "sequences decoded together", inference.max_batch),
      RAGD_FIELD("inference.max_queue", "waiting requests before 503", inference.max_queue),
      RAGD_FIELD("inference.step_tokens", "tokens per batched forward pass", inference.step_tokens),
      RAGD_FIELD("inference.kv_cache_bytes", "KV-cache memory for running sequences",
                 inference.kv_cache_bytes),
      RAGD_FIELD("inference.prefix_cache_bytes", "KV memory kept for repeated prompt prefixes; 0 = off",
                 inference.prefix_cache_bytes),
      RAGD_FIELD("inference.speculative", "prompt-lookup speculative decoding", inference.speculative),
      RAGD_FIELD("inference.draft_tokens", "draft tokens per sequence and step", inference.draft_tokens),
      RAGD_FIELD(
          "inference.draft_shared_answers",
          "answers to distinct prompts whose common phrasing drafts too; 0 = each drafts from itself only",
          inference.draft_shared_answers),
      RAGD_FIELD("inference.compute_nice", "niceness of the compute threads (0-19)", inference.compute_nice),
      RAGD_FIELD("retrieval.top_k", "passages given to the model", retrieval.top_k),
      RAGD_FIELD("retrieval.chunk_tokens", "target chunk length in embedding tokens", retrieval.chunk_tokens),
      RAGD_FIELD("retrieval.chunk_overlap", "tokens shared by neighbouring chunks", retrieval.chunk_overlap),
      RAGD_FIELD("retrieval.index", "vector index: flat or hnsw", retrieval.index),
      RAGD_FIELD("retrieval.max_document_bytes", "largest accepted document", retrieval.max_document_bytes),
      RAGD_FIELD("retrieval.extract_cpu_seconds", "CPU seconds the extraction of one upload may use",
                 retrieval.extract_cpu_seconds),
      RAGD_FIELD("retrieval.extract_memory_bytes", "memory the extraction of one upload may use",
                 retrieval.extract_memory_bytes),
      RAGD_FIELD("retrieval.extract_timeout_s", "seconds before the extraction of one upload is stopped",
                 retrieval.extract_timeout_s),
      RAGD_FIELD("retrieval.max_extracted_bytes", "largest text extracted from one upload",
                 retrieval.max_extracted_bytes),
      RAGD_FIELD("retrieval.ingest_queue", "uploads waiting for ingestion before 503",
                 retrieval.ingest_queue),
      RAGD_FIELD("rag.fast_model", "model id answering ragd-rag-fast; empty = the second of models.llm",
                 rag.fast_model),
      RAGD_FIELD(
          "rag.fallback_waiting",
          "requests waiting for the answer model at which ragd-rag answers with the fast model; 0 = never",
          rag.fallback_waiting),
      RAGD_FIELD("rag.whole_sources",
                 "passages shown to the answer model whole; the others as an excerpt; 0 = all whole",
                 rag.whole_sources),
      RAGD_FIELD("rag.excerpt_bytes", "longest excerpt of a passage after the whole ones", rag.excerpt_bytes),
      RAGD_FIELD("rag.abstain_dense_below",
                 "best passage cosine under which (with no lexical match) the documents do not say",
                 rag.abstain_dense_below),
      RAGD_FIELD("rag.abstain_lexical_below",
                 "BM25 score under which a passage shares no word with the question",
                 rag.abstain_lexical_below),
      RAGD_FIELD("rag.abstain_answerability_below",
                 "share of \"yes\" to \"do the sources state the answer?\" under which the documents do not "
                 "say; asked of an instruction-tuned answer model of >= 1B parameters; 0 = not asked",
                 rag.abstain_answerability_below),
      RAGD_FIELD("rag.translate_queries",
                 "search a question in another language in the English the fast model translates it to",
                 rag.translate_queries),
      RAGD_FIELD("rag.rewrite_follow_ups",
                 "have the answer model rewrite a short follow-up question into one that stands alone, "
                 "then search and answer that",
                 rag.rewrite_follow_ups),
      RAGD_FIELD("quota.tokens_per_period", "default per-user token budget", quota.tokens_per_period),
      RAGD_FIELD("quota.period", "budget period: day or month", quota.period),
      RAGD_FIELD("quota.requests_per_minute", "per-user request rate limit", quota.requests_per_minute),
      RAGD_FIELD("quota.tokens_per_minute", "per-user token rate limit", quota.tokens_per_minute),
      RAGD_FIELD("quota.max_in_flight", "per-user requests running or queued at once; 0 = unlimited",
                 quota.max_in_flight),
      RAGD_FIELD("auth.hash_threads", "threads verifying passwords (64 MiB each)", auth.hash_threads),
      RAGD_FIELD("auth.hash_queue", "password checks waiting for a thread before 503", auth.hash_queue),
      RAGD_FIELD("auth.account_free_failures", "failed sign-ins per account name before backoff",
                 auth.account_free_failures),
      RAGD_FIELD("auth.address_free_failures", "failed sign-ins per client address before backoff",
                 auth.address_free_failures),
      RAGD_FIELD("auth.backoff_max_s", "longest sign-in backoff in seconds", auth.backoff_max_s),
      RAGD_FIELD("log.file", "request log; empty = <data_dir>/requests.jsonl", log.file),
      RAGD_FIELD("log.content", "keep prompts and answers, encrypted", log.content),
      RAGD_FIELD("log.content_key", "64 hex chars: the secretbox key for logged content", log.content_key),
      RAGD_FIELD("log.retention_days", "days encrypted content is kept", log.retention_days),
  };
  return kFields;
}

Status SetConfigValue(Config& config, const std::string& key, const std::string& value) {
  const ConfigField* field = FindField(key);
  if (field == nullptr) return Status::InvalidArgument("unknown config key '" + key + "'");
  ConfigField::Target t = field->target(config);
  if (auto* s = std::get_if<std::string*>(&t)) {
    **s = value;
    return Status::Ok();
  }
  if (auto* list = std::get_if<std::vector<std::string>*>(&t)) {
    (*list)->clear();
    for (size_t begin = 0; begin <= value.size();) {
      size_t end = begin;
      // Commas inside a JSON object (a models.llm pool) do not split.
      for (int depth = 0; end < value.size() && (depth > 0 || value[end] != ','); ++end) {
        if (value[end] == '{' || value[end] == '[') ++depth;
        if (value[end] == '}' || value[end] == ']') --depth;
      }
      std::string item(Trim(std::string_view(value).substr(begin, end - begin)));
      if (!item.empty()) (*list)->push_back(std::move(item));
      begin = end + 1;
    }
    return Status::Ok();
  }
  if (auto* b = std::get_if<bool*>(&t)) {
    if (value == "true" || value == "1")
      **b = true;
    else if (value == "false" || value == "0")
      **b = false;
    else
      return Status::InvalidArgument("config key '" + key + "' must be true or false (got \"" + value +
                                     "\")");
    return Status::Ok();
  }
  if (auto* d = std::get_if<double*>(&t)) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v))
      return Status::InvalidArgument("config key '" + key + "' must be a number (got \"" + value + "\")");
    **d = v;
    return Status::Ok();
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size())
    return Status::InvalidArgument("config key '" + key + "' must be an integer (got \"" + value + "\")");
  *std::get<int64_t*>(t) = v;
  return Status::Ok();
}

Result<Config> LoadConfig(const ConfigSources& sources) {
  Config config;
  if (sources.file) {
    std::ifstream in(*sources.file);
    if (!in) return Status::NotFound("config file " + *sources.file + " cannot be read");
    json j = json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    if (j.is_discarded())
      return Status::InvalidArgument(*sources.file + ": not valid JSON (comments allowed)");
    if (!j.is_object()) return Status::InvalidArgument(*sources.file + ": top level must be an object");
    RAGD_RETURN_IF_ERROR(ApplyJson(config, j, "", *sources.file));
  }
  if (sources.getenv) {
    for (const ConfigField& f : ConfigFields()) {
      const char* v = sources.getenv(f.EnvName().c_str());
      if (v == nullptr) continue;
      Status st = SetConfigValue(config, f.key, v);
      if (!st.ok()) return Status::InvalidArgument(f.EnvName() + ": " + st.message());
    }
  }
  for (const auto& [key, value] : sources.overrides) RAGD_RETURN_IF_ERROR(SetConfigValue(config, key, value));
  RAGD_RETURN_IF_ERROR(Validate(config));
  return config;
}

}  // namespace ragd::app
