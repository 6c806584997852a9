// POST /v1/ask: a question answered from the corpus, with citations.
#include <chrono>

#include "app/routes/request_options.h"
#include "app/routes/routes.h"
#include "app/routes/routes_rag.h"
#include "app/services/generation_runner.h"
#include "common/text.h"

namespace ragd::app {

Result<Retrieved> RetrieveSources(AppContext& ctx, const std::string& question, int top_k) {
  const auto t0 = std::chrono::steady_clock::now();
  retrieval::SearchOptions opts;
  opts.top_k = top_k;
  auto hits = ctx.retriever->Search(question, opts);
  if (!hits.ok()) return hits.status();
  Retrieved r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ctx.metrics.ObserveRetrieval(r.ms / 1000.0);
  r.sources = NumberSources(std::move(hits).value());
  return r;
}

Status PrepareRagRequest(AppContext& ctx, const std::string& question,
                         const std::vector<inference::ChatMessage>& history, GenerationPlan* plan) {
  const inference::Tokenizer& tok = ctx.engine->tokenizer();
  auto ids = tok.Encode(BuildRagPrompt(question, plan->sources, history));
  if (!ids.ok()) return ids.status();
  plan->request.prompt.clear();
  plan->request.prompt.push_back(tok.bos_id());
  plan->request.prompt.insert(plan->request.prompt.end(), ids->begin(), ids->end());
  for (const std::string& s : RagStopStrings()) plan->request.stop.push_back(s);
  return Status::Ok();
}

void RegisterAskRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/ask", WithUser(ctx, Access::kUser, true, [&ctx](const HttpRequest& req, HttpExchange& ex,
                                                                          const accounts::User& user) {
    auto body = ParseJsonObject(req.body);
    if (!body.ok()) return ErrorResponse(body.status());
    auto question = RequiredString(*body, "question", 8192);
    if (!question.ok()) return ErrorResponse(question.status());
    if (Trim(*question).empty()) return ErrorResponse(Status::InvalidArgument("field 'question' must not be empty"));
    auto top_k = OptionalInt(*body, "top_k", 1, 20);
    if (!top_k.ok()) return ErrorResponse(top_k.status());
    // Answers quote their sources: deterministic decoding, a light repetition penalty.
    GenerationOptions defaults;
    defaults.max_tokens = static_cast<int>(ctx.config.inference.max_tokens);
    defaults.sampling.temperature = 0;
    defaults.sampling.repeat_penalty = 1.1f;
    auto opts = ReadGenerationOptions(*body, defaults, ctx.engine->tokenizer().vocab_size());
    if (!opts.ok()) return ErrorResponse(opts.status());

    auto retrieved = RetrieveSources(ctx, *question, static_cast<int>(top_k->value_or(ctx.config.retrieval.top_k)));
    if (!retrieved.ok()) return ErrorResponse(retrieved.status());
    GenerationPlan plan;
    plan.format = AskWireFormat();
    plan.route = "/v1/ask";
    plan.model_id = kRagModelId;
    plan.stream = opts->stream;
    plan.rag = true;
    plan.sources = std::move(retrieved->sources);
    plan.retrieval_ms = retrieved->ms;
    plan.request.sampling = opts->sampling;
    plan.request.max_tokens = opts->max_tokens;
    plan.request.stop = opts->stop;
    if (Status st = PrepareRagRequest(ctx, *question, {}, &plan); !st.ok()) return ErrorResponse(st);
    return RunGeneration(ctx, user, std::move(plan), ex);
  }));
}

}  // namespace ragd::app
