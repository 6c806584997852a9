// Runs one generation request end to end for the HTTP routes: admission
// (context length, rate limit, quota; see admission.h), submission to the
// inference thread, the response (one JSON body, or Server-Sent Events) in
// the plan's wire format, and settling the quota with the real token counts.
// Shared by /v1/chat/completions, /v1/completions and /v1/ask so the three
// stay consistent.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "app/http/http_server.h"
#include "app/services/app_context.h"
#include "app/services/rag_answer.h"
#include "app/services/rag_prompt.h"
#include "app/services/wire_format.h"

namespace ragd::app {

struct GenerationPlan {
  LanguageModel* llm = nullptr;              // the model that generates (required)
  std::shared_ptr<const WireFormat> format;  // how the answer is written (wire_format.h)
  std::string route;                         // route pattern, for usage rows and metrics
  std::string model_id;                      // echoed as "model"
  inference::GenerationRequest request;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage (chat, completions)
  bool rag = false;            // answer from `sources`, with citations
  std::vector<Source> sources;
  double retrieval_ms = 0;
  std::string abstention;  // RAG with nothing relevant retrieved: this is the answer, no generation
  // Called once when the answer is finished ("stop", "length", "cancelled";
  // also for an abstention), before the final event or body is sent; the
  // object it returns becomes Reply::extra. Not called on errors. Runs on
  // the inference or attribution thread: keep it short.
  std::function<Json(const Reply& reply, const std::string& finish_reason)> on_finished;
};

// The longest question a RAG request may ask (/v1/ask, model ragd-rag):
// it is embedded and searched before any token is generated.
inline constexpr size_t kMaxQuestionBytes = 8192;
// InvalidArgument naming the limit when `question` is longer.
Status CheckQuestionLength(std::string_view question);

// Makes `plan` answer `q` from the corpus (rag_answer.h) with plan->llm:
// retrieves the sources and completes plan->request, which carries the
// caller's sampling, max_tokens and stop strings.
Status AnswerFromCorpus(AppContext& ctx, const RagQuestion& q, GenerationPlan* plan);

// Returns the immediate error response, or takes the exchange over (deferred)
// and answers when the generation ends. The returned response is ignored when
// the exchange was deferred.
HttpResponse RunGeneration(AppContext& ctx, const accounts::User& user, GenerationPlan plan,
                           HttpExchange& exchange);

}  // namespace ragd::app
