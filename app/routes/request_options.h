// Generation options shared by the OpenAI-compatible routes and /v1/ask:
// sampling fields, max_tokens, stop strings, stream flags.
#pragma once

#include <string>
#include <vector>

#include "app/http/json_request.h"
#include "app/services/generation_runner.h"
#include "app/services/model_routing.h"
#include "inference/grammar/json_grammar.h"
#include "inference/tokenizer/chat_format.h"
#include "inference/tokenizer/sampler.h"

namespace ragd::app {

struct GenerationOptions {
  inference::SamplingOptions sampling;
  int max_tokens = 0;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;
  int logprobs = -1;  // -1: none; else the alternatives per token (GenerationRequest::logprobs)
  std::shared_ptr<const inference::JsonGrammar> grammar;  // response_format json_object / json_schema
};

// Reads temperature, top_p, top_k, min_p, seed, presence/frequency/repeat
// penalties, logit_bias, max_tokens (or max_completion_tokens), stop, n,
// stream and stream_options from an OpenAI-style body. Every error names the field.
Result<GenerationOptions> ReadGenerationOptions(const Json& body, const GenerationOptions& defaults,
                                                int vocab_size);

// Everything a /v1/chat/completions body may hold besides "model" and
// "messages": the fields below, ReadGenerationOptions', and "logprobs"
// (true/false), "top_logprobs" (0..20, with logprobs), "response_format"
// ({"type": "text" | "json_object" | "json_schema", "json_schema": {"name",
// "schema", "strict", "description"}}: the schema compiled to a grammar,
// json_grammar.h), "user" (accepted, unused: keys identify users). Any other
// field is refused with a 400 naming it. `raw_body` is the text `body` was
// parsed from (a schema's properties keep their order from it).
Result<GenerationOptions> ReadChatOptions(const Json& body, std::string_view raw_body,
                                          const GenerationOptions& defaults, int vocab_size);
// The same for /v1/completions: "prompt", "logprobs" (0..20, alternatives
// per token, as the legacy API), no response_format.
Result<GenerationOptions> ReadCompletionOptions(const Json& body, const GenerationOptions& defaults,
                                                int vocab_size);
// Refuses options the model cannot honour: log-probabilities and a grammar
// need a local model (an upstream pool samples elsewhere), and a RAG model
// answers with citations, not a chosen format.
Status CheckOptionsForModel(const ModelChoice& choice, const GenerationOptions& opts);

// The "messages" of a chat request: {"role","content"} objects whose content
// is a string or an array of text parts; "developer" reads as "system".
Result<std::vector<inference::ChatMessage>> ReadMessages(const Json& body);

// The model a request's "model" field names (model_routing.h ChooseModel);
// `fallback` when the field is absent (null: the first LLM). Errors name the field.
Result<ModelChoice> ReadModelChoice(AppContext& ctx, const Json& body, const char* fallback = nullptr);

// A generation plan for `choice` with the request's options: the model, the
// name echoed as "model", streaming, sampling, length and stop strings, as
// every generating route sets them; the caller adds the prompt (or the RAG
// question).
GenerationPlan NewGenerationPlan(const ModelChoice& choice, std::shared_ptr<const WireFormat> format,
                                 std::string route, const GenerationOptions& opts);

}  // namespace ragd::app
