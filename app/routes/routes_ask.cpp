// POST /v1/ask: a question answered from the corpus, with citations.
#include <chrono>

#include "app/routes/chat_routes.h"
#include "app/routes/request_options.h"
#include "app/routes/routes.h"
#include "app/services/generation_runner.h"
#include "app/services/model_routing.h"
#include "common/text.h"

namespace ragd::app {
namespace {

// "question", or "messages" (the conversation so far, ending with the
// user's question: a follow-up is searched and answered in its context).
Result<RagQuestion> ReadQuestion(const Json& body) {
  RagQuestion q;
  if (body.contains("messages")) {
    if (body.contains("question"))
      return Status::InvalidArgument("give either 'question' or 'messages', not both");
    auto messages = ReadMessages(body);
    if (!messages.ok()) return messages.status();
    if (messages->back().role != "user")
      return Status::InvalidArgument("the last of 'messages' must be the user's question");
    q.question = std::move(messages->back().content);
    messages->pop_back();
    q.history = std::move(messages).value();
    if (Status st = CheckQuestionLength(q.question); !st.ok()) return st;
  } else {
    auto question = RequiredString(body, "question", kMaxQuestionBytes);
    if (!question.ok()) return question.status();
    q.question = std::move(question).value();
  }
  if (Trim(q.question).empty()) return Status::InvalidArgument("the question must not be empty");
  return q;
}

}  // namespace

void RegisterAskRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/ask",
             WithUser(ctx, Access::kUser, true,
                      [&ctx](const HttpRequest& req, HttpExchange& ex, const accounts::User& user) {
                        auto body = ParseJsonObject(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        auto question = ReadQuestion(*body);
                        if (!question.ok()) return ErrorResponse(question.status());
                        auto top_k = OptionalInt(*body, "top_k", 1, 20);
                        if (!top_k.ok()) return ErrorResponse(top_k.status());
                        GenerationOptions defaults;
                        defaults.max_tokens = static_cast<int>(ctx.config.inference.max_tokens);
                        defaults.sampling = RagAnswerSampling();
                        auto choice = ReadModelChoice(ctx, *body, kRagModelId);
                        if (!choice.ok()) return ErrorResponse(choice.status());
                        if (!choice->rag) {
                          return ErrorResponse(Status::InvalidArgument("field 'model' must be \"" +
                                                                       std::string(kRagModelId) + "\" or \"" +
                                                                       kRagFastModelId + "\""));
                        }
                        auto opts = ReadGenerationOptions(*body, defaults,
                                                          choice->llm->engine->tokenizer().vocab_size());
                        if (!opts.ok()) return ErrorResponse(opts.status());

                        GenerationPlan plan = NewGenerationPlan(*choice, AskWireFormat(), "/v1/ask", *opts);
                        RagQuestion q = std::move(question).value();
                        q.top_k = static_cast<int>(top_k->value_or(ctx.config.retrieval.top_k));
                        if (Status st = ApplyChatFields(ctx, user, *body, &q, &plan); !st.ok())
                          return ErrorResponse(st);
                        // Admitted before retrieval: a refused user costs no search.
                        return RunRagGeneration(ctx, user, q, std::move(plan), ex);
                      }));
}

}  // namespace ragd::app
