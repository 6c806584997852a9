#include "app/services/model_bootstrap.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/config/module_options.h"

namespace ragd::app {
namespace {

Status Failed(const Status& st, const char* what) {
  return Status(st.code(), std::string(what) + st.message());
}

// The pool options of a models.llm pool entry; the API key is read from the
// environment here, once, so it never sits in the configuration.
Result<upstream::PoolOptions> PoolOptionsFor(const Config& config, const LlmEntry& entry) {
  const UpstreamPoolConfig& u = *entry.upstream;
  upstream::PoolOptions o;
  o.id = entry.id;
  o.urls = u.urls;
  o.model = u.model;
  if (!u.api_key_env.empty()) {
    const char* key = std::getenv(u.api_key_env.c_str());
    if (key == nullptr || *key == '\0')
      return Status::InvalidArgument("upstream pool " + entry.id + ": the environment variable " +
                                     u.api_key_env + " (its API key) is not set");
    o.api_key = key;
  }
  o.concurrency = static_cast<int>(u.concurrency);
  o.max_queue = static_cast<int>(std::min<int64_t>(u.max_queue, config.inference.max_queue));
  o.failures_to_open = static_cast<int>(u.failures_to_open);
  o.health_interval_ms = u.health_interval_ms;
  o.connect_timeout_ms = u.connect_timeout_ms;
  o.idle_timeout_ms = u.idle_timeout_ms;
  return o;
}

}  // namespace

Result<std::unique_ptr<LanguageModel>> StartLanguageModel(const Config& config, LoadedLlm loaded) {
  auto llm = std::make_unique<LanguageModel>();
  llm->id = loaded.id;
  llm->engine = std::move(loaded.engine);
  if (loaded.upstream) {
    auto pool = upstream::Pool::Create(std::move(*loaded.upstream), llm->engine->tokenizer());
    if (!pool.ok()) return pool.status();
    llm->pool = pool->get();
    llm->generator = std::move(pool).value();
  } else {
    llm->scheduler = std::make_unique<inference::Scheduler>(*llm->engine, SchedulerOptionsFor(config));
    llm->generator = std::make_unique<inference::LocalGenerator>(*llm->scheduler);
  }
  return llm;
}

void AppendUpstreamGauges(const LanguageModel& llm, std::vector<MetricSample>* out) {
  if (llm.pool == nullptr) return;
  const upstream::PoolStats s = llm.pool->stats();
  const std::string model = "model=\"" + llm.id + "\"";
  const auto d = [](auto v) { return static_cast<double>(v); };
  for (const upstream::EndpointStats& e : s.endpoints) {
    const std::string labels = model + ",endpoint=\"" + e.url + "\"";
    out->push_back({"ragd_upstream_circuit_open", e.open ? 1.0 : 0.0,
                    "1 while the endpoint's circuit is open (it gets no requests).", false, labels});
    out->push_back(
        {"ragd_upstream_in_flight", d(e.in_flight), "Requests streaming from the endpoint.", false, labels});
    out->push_back(
        {"ragd_upstream_requests_total", d(e.requests), "Attempts sent to the endpoint.", true, labels});
    out->push_back({"ragd_upstream_failures_total", d(e.failures),
                    "Attempts and health probes of the endpoint that failed.", true, labels});
    out->push_back({"ragd_upstream_circuit_opens_total", d(e.circuit_opens),
                    "Times the endpoint's circuit opened.", true, labels});
  }
  const auto add = [&](const char* name, double v, const char* help, bool counter) {
    out->push_back({name, v, help, counter, model});
  };
  add("ragd_upstream_waiting", d(s.waiting), "Requests queued for an upstream endpoint.", false);
  add("ragd_upstream_retries_total", d(s.retries),
      "Requests sent to another endpoint after one failed before the first token.", true);
  add("ragd_upstream_failed_mid_stream_total", d(s.failed_mid_stream),
      "Requests ended by an endpoint failing after their first token (charged what was streamed).", true);
  add("ragd_upstream_usage_compared_total", d(s.usage_compared),
      "Answers whose upstream usage block was compared with ragd's own token count.", true);
  add("ragd_upstream_usage_mismatch_total", d(s.usage_mismatches),
      "Answers whose upstream usage differed from ragd's own token count.", true);
  add("ragd_upstream_usage_mismatch_tokens_total", d(s.usage_mismatch_tokens),
      "Summed absolute difference between upstream usage and ragd's own token count.", true);
}

std::string LlmId(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.ends_with(".gguf")) name.resize(name.size() - 5);
  return name;
}

Result<Models> LoadModels(const Config& config, const ModelLoadOptions& options) {
  Models m;
  if (options.language_model) {
    auto entries = config.LlmEntries();
    if (!entries.ok()) return entries.status();
    for (const LlmEntry& entry : *entries) {
      LoadedLlm llm{.id = entry.id};
      for (const LoadedLlm& other : m.llms) {
        if (other.id == llm.id) return Status::InvalidArgument("models.llm names model " + llm.id + " twice");
      }
      inference::EngineOptions eopts = EngineOptionsFor(config, entry.path, llm.id);
      if (entry.upstream) {
        auto pool = PoolOptionsFor(config, entry);
        if (!pool.ok()) return pool.status();
        llm.upstream = std::move(pool).value();
        eopts.vocabulary_only = true;
        if (entry.upstream->context_length > 0)
          eopts.context_length = static_cast<int>(entry.upstream->context_length);
      }
      auto engine = inference::Engine::Load(eopts);
      if (!engine.ok())
        return Failed(engine.status(), ("cannot load the language model " + llm.id + ": ").c_str());
      llm.engine = std::move(engine).value();
      m.llms.push_back(std::move(llm));
    }
  }

  retrieval::EmbedderOptions eopts;
  // A pool's engine has no threads: the embedder then keeps its own.
  if (options.share_engine_threads && !m.llms.empty() && m.llms.front().engine->threads() > 0)
    eopts.threads = m.llms.front().engine->threads();
  auto embedder = retrieval::Embedder::Load(config.EmbeddingPath(), eopts);
  if (!embedder.ok()) return Failed(embedder.status(), "cannot load the embedding model: ");
  m.embedder = std::move(embedder).value();
  m.embedding_id = std::filesystem::path(config.EmbeddingPath()).filename().string();

  retrieval::RetrieverOptions ropts = RetrieverOptionsFor(config);
  // Bulk ingestion commits without fsync per document: a crash loses at most
  // the last documents, and running the command again adds them.
  if (options.bulk_ingest) ropts.synchronous_full = false;
  auto retriever = retrieval::Retriever::Open(ropts, m.embedder, &m.index_report);
  if (!retriever.ok()) return Failed(retriever.status(), "cannot open the corpus: ");
  m.retriever = std::move(retriever).value();
  return m;
}

std::string IndexRepairNote(const retrieval::OpenReport& r) {
  char buf[160];
  if (r.rebuilt && r.vectors > 0) {
    std::snprintf(buf, sizeof buf, "vector index rebuilt from the database (%lld vectors, %.1f s): ",
                  static_cast<long long>(r.vectors), r.seconds);
  } else if (r.repaired) {
    std::snprintf(buf, sizeof buf,
                  "vector index repaired (%lld added, %lld removed): ", static_cast<long long>(r.added),
                  static_cast<long long>(r.removed));
  } else {
    return "";
  }
  return buf + r.reason;
}

}  // namespace ragd::app
