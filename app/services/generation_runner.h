// Runs one generation request end to end for the HTTP routes: admission on
// an estimate before the prompt is built (in-flight cap, rate limit, quota;
// see admission.h), then with the exact count (context length, resize),
// submission to the inference thread, the response (one JSON body, or
// Server-Sent Events) in the plan's wire format, cancellation when the
// client goes away (queued, in prefill or decoding), and settling the quota
// with the real token counts. Shared by /v1/chat/completions,
// /v1/completions and /v1/ask so the three stay consistent.
//
// A route calls, in order: AdmitGeneration (nothing built yet), whatever
// builds the prompt (AnswerFromCorpus, the chat template, tokenization), then
// RunGeneration with the admission.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/http/http_server.h"
#include "app/services/admission.h"
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
  double translation_ms =
      0;  // the question's translation before retrieval (query_translation.h); 0 when none
  double answerability_ms = 0;     // the answerability check before the answer (answerability.h); 0 when none
  double rewrite_ms = 0;           // a follow-up's rewrite before retrieval (follow_up.h); 0 when none
  std::string rewritten_question;  // that rewrite, searched and answered instead; "" when none
  std::string abstention;          // RAG with nothing relevant retrieved: this is the answer, no generation
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

// What `text` is expected to cost in tokens before it is tokenized: about
// four bytes a token, plus a few for the template around it. Admission uses
// it only to refuse early; Admission::Resize charges the exact count, so an
// estimate too short costs nothing and one too long refuses a request that
// would have fitted (hence not the one-byte-a-token upper bound).
int64_t TextTokenEstimate(std::string_view text);
// The estimate of a chat prompt: its messages and the template around them.
int64_t ChatPromptEstimate(const std::vector<inference::ChatMessage>& messages);
// The estimate of a RAG prompt for `q`: the rules, q.top_k passages of
// retrieval.chunk_tokens each, the conversation and the question.
int64_t RagPromptEstimate(const AppContext& ctx, const RagQuestion& q);

// Admits `plan` for `user` before its prompt is built, on `prompt_estimate`
// + max_tokens (at most the model's context). Returns nullopt with
// `*admitted` set, or the refusal (429, or the error's status).
std::optional<HttpResponse> AdmitGeneration(AppContext& ctx, const accounts::User& user,
                                            const GenerationPlan& plan, int64_t prompt_estimate,
                                            Admission* admitted);

// Makes `plan` answer `q` from the corpus (rag_answer.h) with plan->llm:
// retrieves the sources and completes plan->request, which carries the
// caller's sampling, max_tokens and stop strings.
Status AnswerFromCorpus(AppContext& ctx, const RagQuestion& q, GenerationPlan* plan);

// A RAG answer for `user`: admitted on its estimate before anything is
// retrieved, then answered from the corpus (AnswerFromCorpus) and run.
HttpResponse RunRagGeneration(AppContext& ctx, const accounts::User& user, const RagQuestion& q,
                              GenerationPlan plan, HttpExchange& exchange);

// Runs `plan` (its prompt built) under `admission` (from AdmitGeneration),
// resized to the exact count. Returns the immediate error response (the
// admission then given back), or takes the exchange over (deferred) and
// answers when the generation ends. The returned response is ignored when
// the exchange was deferred.
HttpResponse RunGeneration(AppContext& ctx, const accounts::User& user, GenerationPlan plan,
                           Admission admission, HttpExchange& exchange);

}  // namespace ragd::app
