// POST /v1/ask: a question answered from the corpus, with citations.
#include <chrono>

#include "app/routes/request_options.h"
#include "app/routes/routes.h"
#include "app/services/generation_runner.h"
#include "app/services/model_routing.h"
#include "common/text.h"

namespace ragd::app {

void RegisterAskRoutes(HttpServer& http, AppContext& ctx) {
  http.Route(
      "POST", "/v1/ask",
      WithUser(
          ctx, Access::kUser, true,
          [&ctx](const HttpRequest& req, HttpExchange& ex, const accounts::User& user) {
            auto body = ParseJsonObject(req.body);
            if (!body.ok()) return ErrorResponse(body.status());
            auto question = RequiredString(*body, "question", 8192);
            if (!question.ok()) return ErrorResponse(question.status());
            if (Trim(*question).empty())
              return ErrorResponse(Status::InvalidArgument("field 'question' must not be empty"));
            auto top_k = OptionalInt(*body, "top_k", 1, 20);
            if (!top_k.ok()) return ErrorResponse(top_k.status());
            GenerationOptions defaults;
            defaults.max_tokens = static_cast<int>(ctx.config.inference.max_tokens);
            defaults.sampling = RagAnswerSampling();
            auto model = OptionalString(*body, "model", 256);
            if (!model.ok()) return ErrorResponse(model.status());
            auto choice = ChooseModel(ctx, model->value_or(kRagModelId));
            if (!choice.ok()) return ErrorResponse(choice.status());
            if (!choice->rag) {
              return ErrorResponse(Status::InvalidArgument("field 'model' must be \"" +
                                                           std::string(kRagModelId) + "\" or \"" +
                                                           kRagFastModelId + "\""));
            }
            auto opts = ReadGenerationOptions(*body, defaults, choice->llm->engine->tokenizer().vocab_size());
            if (!opts.ok()) return ErrorResponse(opts.status());

            GenerationPlan plan;
            plan.llm = choice->llm;
            plan.format = AskWireFormat();
            plan.route = "/v1/ask";
            plan.model_id = choice->requested;
            plan.stream = opts->stream;
            plan.request.sampling = opts->sampling;
            plan.request.max_tokens = opts->max_tokens;
            plan.request.stop = opts->stop;
            const RagQuestion q{*question, {}, static_cast<int>(top_k->value_or(ctx.config.retrieval.top_k))};
            if (Status st = AnswerFromCorpus(ctx, q, &plan); !st.ok()) return ErrorResponse(st);
            return RunGeneration(ctx, user, std::move(plan), ex);
          }));
}

}  // namespace ragd::app
