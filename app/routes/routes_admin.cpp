// The admin page's system status: what is loaded, how busy it is, and how
// fast answers came over the last hour (the figures /metrics exposes, in one
// JSON object a page can show without a Prometheus server).
#include <chrono>

#include "app/routes/routes.h"

namespace ragd::app {
namespace {

Json Optional(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json ModelsJson(const AppContext& ctx) {
  Json models = Json::array();
  for (const auto& m : ctx.llms)
    models.push_back({{"id", m->id},
                      {"role", "chat"},
                      {"backend", m->pool != nullptr ? "upstream" : "local"},
                      {"context_length", m->engine->context_length()}});
  if (ctx.embedder)
    models.push_back({{"id", ctx.embedding_id},
                      {"role", "embedding"},
                      {"backend", "local"},
                      {"context_length", ctx.embedder->max_tokens()}});
  return models;
}

// Per language model: waiting generations (the generator's count, a local
// model's scheduler gauge or a pool's queue), and for local models the
// admitted ones and KV-cache use (a pool's cache lives on its upstreams).
Json LoadJson(const AppContext& ctx) {
  Json llms = Json::array();
  for (const auto& m : ctx.llms) {
    Json j = {{"id", m->id}, {"waiting", m->generator->waiting()}};
    if (m->scheduler) {
      const inference::SchedulerGauges g = m->scheduler->gauges();
      j["running"] = g.running;
      j["kv_cache_bytes"] = g.kv_bytes;
      j["kv_cache_budget_bytes"] = g.kv_budget_bytes;
      j["kv_cache_usage_ratio"] =
          g.kv_budget_bytes ? static_cast<double>(g.kv_bytes) / static_cast<double>(g.kv_budget_bytes) : 0.0;
    }
    llms.push_back(std::move(j));
  }
  return llms;
}

Json CorpusJson(const AppContext& ctx) {
  const corpus::Store& store = ctx.retriever->store();
  auto documents = store.CountDocuments();
  auto chunks = store.CountChunks();
  return {{"documents", documents.ok() ? Json(*documents) : Json(nullptr)},
          {"chunks", chunks.ok() ? Json(*chunks) : Json(nullptr)}};
}

Json IngestJson(const AppContext& ctx) {
  int64_t queued = 0, running = 0;
  for (const IngestJobStatus& j : ctx.ingest_jobs->List()) {
    queued += j.state == IngestState::kQueued;
    running += j.state == IngestState::kRunning;
  }
  return {{"queued", queued}, {"running", running}};
}

Json StatusJson(const AppContext& ctx) {
  const GenerationSummary recent = ctx.metrics.RecentGenerations();
  Json j = {{"version", RAGD_PROJECT_VERSION},
            {"uptime_s", std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                          ctx.started_at)
                             .count()},
            {"ready", ctx.ready.load()},
            {"last_hour",
             {{"generations", recent.generations},
              {"prompt_tokens", recent.prompt_tokens},
              {"completion_tokens", recent.completion_tokens},
              {"ttft_p50_s", Optional(recent.ttft_p50_s)},
              {"ttft_p95_s", Optional(recent.ttft_p95_s)},
              {"decode_tokens_per_s", Optional(recent.decode_tokens_per_s)}}}};
  if (ctx.load_failed) j["load_error"] = "the models failed to load; the server log says why";
  if (!ctx.ready) return j;  // the models and what hangs off them are not there yet
  j["models"] = ModelsJson(ctx);
  j["llms"] = LoadJson(ctx);
  j["corpus"] = CorpusJson(ctx);
  j["ingest"] = IngestJson(ctx);
  return j;
}

}  // namespace

void RegisterAdminRoutes(HttpServer& http, AppContext& ctx) {
  // Answers while the models load too (ready: false), so the page can say so.
  http.Route(
      "GET", "/v1/admin/status",
      WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        return JsonResponse(200, StatusJson(ctx));
      }));
}

}  // namespace ragd::app
