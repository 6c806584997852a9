#include "app/server/server.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "app/config/module_options.h"
#include "app/routes/routes.h"
#include "app/server/web_dir.h"
#include "app/services/ingest_if_empty.h"
#include "app/services/model_bootstrap.h"
#include "retrieval/attribution.h"

namespace ragd::app {
namespace {

// Generated credentials go to a file only the server's user can read, not
// to the console, whose output often ends up in a shared log (journald,
// docker logs, CI output).
Status ReportAdminCredentials(const accounts::AdminBootstrap& admin, const Config& config) {
  std::printf("ragd: created the admin account '%s'\n", admin.username.c_str());
  if (admin.password_generated || admin.api_key_generated) {
    const std::string path = config.data_dir + "/admin-credentials.txt";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return Status::IoError("cannot write " + path + ": " + std::strerror(errno));
    std::string text = "username: " + admin.username + "\n";
    if (admin.password_generated) text += "password: " + admin.password + "\n";
    if (admin.api_key_generated) text += "api_key: " + admin.api_key + "\n";
    const bool written =
        ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!written || !synced) return Status::IoError("cannot write " + path);
    std::printf("ragd:   generated credentials: %s (readable by this user only; delete it once read)\n",
                path.c_str());
  }
  std::printf("ragd:   sign in at http://%s:%lld/login\n", config.server.host.c_str(),
              static_cast<long long>(config.server.port));
  std::fflush(stdout);
  return Status::Ok();
}

// The scheduler's gauges of one model, labelled with its id.
void AppendSchedulerGauges(const std::string& model, const inference::SchedulerGauges& s,
                           std::vector<MetricSample>* out) {
  const std::string labels = "model=\"" + model + "\"";
  const auto add = [&](const char* name, double v, const char* help, bool counter) {
    out->push_back({name, v, help, counter, labels});
  };
  const auto d = [](auto v) { return static_cast<double>(v); };
  add("ragd_requests_running", d(s.running), "Generations admitted to the batch.", false);
  add("ragd_requests_waiting", d(s.waiting), "Generations queued for admission.", false);
  add("ragd_kv_cache_bytes", d(s.kv_bytes), "KV-cache memory held by running generations.", false);
  add("ragd_kv_cache_budget_bytes", d(s.kv_budget_bytes), "KV-cache memory budget.", false);
  add("ragd_kv_cache_usage_ratio", s.kv_budget_bytes ? d(s.kv_bytes) / d(s.kv_budget_bytes) : 0.0,
      "Share of the KV-cache budget in use.", false);
  add("ragd_prefix_cache_bytes", d(s.prefix.bytes), "KV memory kept for prompt prefixes.", false);
  add("ragd_prefix_cache_queries_total", d(s.prefix.queries), "Prompts looked up in the prefix cache.", true);
  add("ragd_prefix_cache_hits_total", d(s.prefix.hits), "Prompts that reused a cached prefix.", true);
  add("ragd_prefix_cache_hit_tokens_total", d(s.prefix.hit_tokens),
      "Prompt tokens reused from the prefix cache.", true);
  add("ragd_batch_steps_total", d(s.steps), "Batched forward passes run.", true);
  add("ragd_batch_step_tokens_total", d(s.step_tokens), "Tokens computed in batched forward passes.", true);
  add("ragd_batch_step_seconds_total", s.step_seconds, "Time spent in batched forward passes.", true);
  add("ragd_batch_row_cost_ratio", s.row_cost,
      "Measured cost of one more decode row relative to a step's fixed cost (plans drafts).", false);
  add("ragd_draft_tokens_total", d(s.draft_tokens), "Speculative draft tokens proposed.", true);
  add("ragd_draft_tokens_accepted_total", d(s.draft_accepted), "Speculative draft tokens accepted.", true);
}

}  // namespace

RagServer::RagServer(Config config, ServeOptions options) : options_(std::move(options)) {
  ctx_.config = std::move(config);
  ctx_.web_dir = ctx_.config.server.web_dir.empty() ? DefaultWebDir() : ctx_.config.server.web_dir;
}

RagServer::~RagServer() { Stop(); }

Status RagServer::Start() {
  const Config& c = ctx_.config;
  // Each connection is a descriptor: take all the system allows (the soft
  // limit is often 1024 of a hard limit far above), so the connection caps
  // are what limits them.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  // Everything the server writes (database, index, logs, credentials) is
  // for this user only: files 0600, folders 0700.
  ::umask(077);
  std::error_code ec;
  std::filesystem::create_directories(c.data_dir, ec);
  if (ec) return Status::IoError("cannot create data folder " + c.data_dir + ": " + ec.message());
  std::filesystem::permissions(c.data_dir, std::filesystem::perms::owner_all, ec);
  if (ec) return Status::IoError("cannot restrict data folder " + c.data_dir + ": " + ec.message());

  accounts::AccountsOptions aopts;
  aopts.db_path = c.data_dir + "/app.db";
  aopts.postgres_url = c.storage.postgres_url;  // non-empty: the accounts live there, shared by replicas
  aopts.quota.tokens_per_period = c.quota.tokens_per_period;
  auto period = accounts::ParsePeriod(c.quota.period);
  if (!period.ok()) return period.status();
  aopts.quota.period = *period;
  aopts.rate_limits.requests_per_minute = c.quota.requests_per_minute;
  aopts.rate_limits.tokens_per_minute = c.quota.tokens_per_minute;
  aopts.rate_limits.max_in_flight = c.quota.max_in_flight;
  aopts.login_throttle.account_free_failures = c.auth.account_free_failures;
  aopts.login_throttle.address_free_failures = c.auth.address_free_failures;
  aopts.login_throttle.max_delay_s = c.auth.backoff_max_s;
  auto accounts = accounts::Accounts::Open(aopts);
  if (!accounts.ok()) return accounts.status();
  ctx_.accounts = std::move(accounts).value();
  auto admin = accounts::EnsureAdmin(*ctx_.accounts, [](const char* name) { return std::getenv(name); });
  if (!admin.ok()) return admin.status();
  if (admin->created) RAGD_RETURN_IF_ERROR(ReportAdminCredentials(*admin, c));

  RequestLogOptions lopts;
  lopts.path = c.log.file.empty() ? c.data_dir + "/requests.jsonl" : c.log.file;
  if (c.log.content) lopts.content_dir = c.data_dir + "/content-log";
  lopts.content_key_hex = c.log.content_key;
  lopts.retention_days = c.log.retention_days;
  auto request_log = RequestLog::Open(lopts);
  if (!request_log.ok()) return request_log.status();
  ctx_.request_log = std::move(request_log).value();

  ctx_.password_pool = std::make_unique<WorkPool>(static_cast<size_t>(c.auth.hash_threads),
                                                  static_cast<size_t>(c.auth.hash_queue));
  // Its tasks mostly wait (for the models, which batch their requests);
  // every one ends within the checks' timeouts.
  ctx_.rag_pool =
      std::make_unique<WorkPool>(16, static_cast<size_t>(std::max<int64_t>(c.inference.max_queue, 1)));

  HttpServerOptions opts;
  opts.trust_proxy = c.server.trust_proxy;
  opts.cors_origins = c.server.cors_origins;
  opts.secure_cookies = c.server.secure_cookies == "always"  ? SecureCookies::kAlways
                        : c.server.secure_cookies == "never" ? SecureCookies::kNever
                                                             : SecureCookies::kAuto;
  opts.host = c.server.host;
  opts.port = static_cast<int>(c.server.port);
  opts.threads = static_cast<int>(c.server.threads);
  // The request line and headers on top of the largest body (Pistache
  // buffers both under one limit).
  constexpr int64_t kHeaderAllowance = 64 << 10;
  opts.max_request_bytes =
      static_cast<size_t>(std::max(c.server.max_json_bytes, c.server.max_upload_bytes) + kHeaderAllowance);
  opts.max_json_bytes = static_cast<size_t>(c.server.max_json_bytes);
  // Uploads (multipart, or JSON {title, text}) only on the upload route.
  opts.body_limits["POST /v1/documents"] = {static_cast<size_t>(c.server.max_upload_bytes), true};
  opts.max_connections = static_cast<int>(c.server.max_connections);
  opts.max_connections_per_address = static_cast<int>(c.server.max_connections_per_address);
  opts.header_timeout_s = static_cast<int>(c.server.header_timeout_s);
  opts.stream_timeout_s = static_cast<int>(c.server.stream_timeout_s);
  opts.on_response = [this](const HttpRequest& req, int status, double seconds) {
    RequestRecord r;
    r.time = static_cast<int64_t>(::time(nullptr));
    r.request_id = req.request_id;
    r.user_id = req.user_id;
    r.route = req.route.empty() ? "unmatched" : req.route;
    r.status = status;
    r.duration_ms = seconds * 1000;
    // Probes and scrapes are counted but kept out of the request log.
    if (r.route == "/healthz" || r.route == "/readyz" || r.route == "/metrics" || r.route == "/static/:file")
      ctx_.metrics.CountRequest(r.route, r.status, seconds);
    else
      RecordRequest(ctx_, r);
  };
  http_ = std::make_unique<HttpServer>(opts);
  RegisterHealthRoutes(*http_, ctx_);
  RegisterAuthRoutes(*http_, ctx_);
  RegisterUserRoutes(*http_, ctx_);
  RegisterDocumentRoutes(*http_, ctx_);
  RegisterOpenAiRoutes(*http_, ctx_);
  RegisterAskRoutes(*http_, ctx_);
  RegisterConversationRoutes(*http_, ctx_);
  RegisterFeedbackRoutes(*http_, ctx_);
  RegisterLibraryRoutes(*http_, ctx_);
  RegisterAdminRoutes(*http_, ctx_);
  RegisterStaticRoutes(*http_, ctx_);
  ctx_.metrics.SetGaugeSource([this] {
    std::vector<MetricSample> g;
    g.push_back({"ragd_ready", ctx_.ready ? 1.0 : 0.0, "1 once the models are loaded.", false});
    if (!ctx_.ready) return g;
    for (const auto& llm : ctx_.llms) {
      if (llm->scheduler) AppendSchedulerGauges(llm->id, llm->scheduler->gauges(), &g);
      AppendUpstreamGauges(*llm, &g);
    }
    return g;
  });
  RAGD_RETURN_IF_ERROR(http_->Start());
  loader_ = std::thread([this] { LoadModels(); });
  return Status::Ok();
}

void RagServer::BeginDrain() { ctx_.draining = true; }

void RagServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  BeginDrain();
  if (http_) {
    // The generations stop through their own handles while the connections
    // are still open, so each stream ends with an error event and is charged
    // what it generated; the grace bounds how long their last bytes may take.
    http_->InterruptDeferred();
    constexpr auto kEndingGrace = std::chrono::seconds(3);
    const auto deadline = std::chrono::steady_clock::now() + kEndingGrace;
    while (http_->InFlight() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    http_->Shutdown();
  }
  if (loader_.joinable()) loader_.join();
  ctx_.rag_pool.reset();         // questions still being planned hand their answers over, or fail
  for (auto& llm : ctx_.llms) {  // cancels running generations
    llm->pool = nullptr;
    llm->generator.reset();
    llm->scheduler.reset();
  }
  ctx_.attribution.reset();    // finishes the answers' last sentences
  ctx_.ingest_jobs.reset();    // finishes the upload in progress
  ctx_.password_pool.reset();  // finishes the sign-ins accepted
  if (ctx_.retriever) ctx_.retriever->SaveIndex();
}

void RagServer::LoadModels() {
  Status st = LoadModelsOrFail();
  if (!st.ok()) {
    ctx_.load_error = st.message();
    ctx_.load_failed = true;
    std::fprintf(stderr, "ragd: %s\n", st.message().c_str());
  }
}

Status RagServer::LoadModelsOrFail() {
  const Config& c = ctx_.config;
  const auto t0 = std::chrono::steady_clock::now();
  ModelLoadOptions load;
  load.share_engine_threads = true;
  auto models = app::LoadModels(c, load);
  if (!models.ok()) return models.status();
  ctx_.embedder = std::move(models->embedder);
  ctx_.retriever = std::move(models->retriever);
  ctx_.embedding_id = models->embedding_id;
  if (const std::string note = IndexRepairNote(models->index_report); !note.empty())
    std::printf("ragd: %s\n", note.c_str());

  if (!options_.ingest_if_empty.empty()) {
    auto seeded = IngestIfEmpty(*ctx_.retriever, options_.ingest_if_empty);
    if (!seeded.ok()) {
      std::fprintf(stderr, "ragd: cannot ingest %s: %s\n", options_.ingest_if_empty.c_str(),
                   seeded.status().message().c_str());
    } else if (seeded->ingested) {
      for (const Status& f : seeded->failures)
        std::fprintf(stderr, "ragd: skipped %s\n", f.message().c_str());
      std::printf("ragd: ingested %zu sample documents from %s\n", seeded->files,
                  options_.ingest_if_empty.c_str());
    }
  }

  std::string names;
  for (LoadedLlm& loaded : models->llms) {
    auto llm = StartLanguageModel(c, std::move(loaded));
    if (!llm.ok()) return llm.status();
    names += (names.empty() ? "" : ", ") + (*llm)->id;
    ctx_.llms.push_back(std::move(llm).value());
  }
  ctx_.ingest_jobs =
      std::make_unique<IngestJobs>(ctx_.retriever.get(), static_cast<size_t>(c.retrieval.ingest_queue));
  // About 100 answers' passages and sentences on a corpus without repeats
  // (35 texts each): 1.5 KiB per vector, and the texts (about 230 bytes on
  // average) held twice, some 8 MiB.
  constexpr size_t kAttributionCacheTexts = 4096;
  ctx_.attribution_embeddings = std::make_unique<retrieval::EmbeddingCache>(
      retrieval::EmbedTextsWith(*ctx_.embedder), kAttributionCacheTexts);
  ctx_.attribution = std::make_unique<WorkQueue>();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("ragd: ready in %.1f s (%s, %d threads; embeddings %s)\n", s, names.c_str(),
              DefaultLlm(ctx_).engine->threads(), ctx_.embedding_id.c_str());
  std::fflush(stdout);
  ctx_.ready = true;
  return Status::Ok();
}

}  // namespace ragd::app
