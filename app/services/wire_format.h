// How a generation's answer is written on the wire. The generation runner
// owns the accounting and the stream; a WireFormat only shapes the JSON, one
// implementation per API: OpenAI chat completions and OpenAI (text)
// completions (wire_openai.cpp), and ragd's /v1/ask (wire_ask.cpp).
//
// Thread-safety: implementations are stateless; any thread may call them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/http/json_request.h"
#include "app/services/rag_prompt.h"

namespace ragd::app {

// One generated token with its log-probability (logprobs requested): its
// text (the raw bytes; a control token's piece), its byte offset in the
// generated text, and the most likely alternatives, best first.
struct ReplyToken {
  std::string text;
  float logprob = 0;
  size_t offset = 0;
  std::vector<std::pair<std::string, float>> top;
};

// What a wire format may say about one generation.
struct Reply {
  std::string id;                                // "chatcmpl-…", "cmpl-…", "ask-…"
  int64_t created = 0;                           // Unix seconds
  std::string model_id;                          // echoed as "model"
  bool rag = false;                              // answered from `sources`, with citations
  std::string answer_model;                      // the LLM that wrote a RAG answer (routing), "" otherwise
  std::string rewritten_question;                // a RAG follow-up as searched and answered, "" when as asked
  const std::vector<Source>* sources = nullptr;  // the numbered passages (RAG), else empty
  bool include_usage = false;                    // stream_options.include_usage (OpenAI formats)
  std::string text;                              // the answer so far (all of it once finished)
  // RAG answers, once finished: {"grounded", "sentences": [{"start", "end",
  // "citations": [{"n", "support"}], "factual", "supported"}]} (byte spans of
  // `text`); null when the answer was not attributed.
  Json attribution;
  bool logprobs = false;                 // the client asked for log-probabilities
  std::vector<ReplyToken> tokens;        // every token so far, when logprobs
  std::vector<ReplyToken> delta_tokens;  // the tokens of the delta being streamed, when logprobs
  // Fields the caller adds to the final event or body (GenerationPlan::
  // on_finished: the stored conversation turn); null when none.
  Json extra;
};

// The end of a generation: finish reason and the usage and timings objects.
struct ReplyEnd {
  std::string finish_reason;  // "stop", "length"
  Json usage;
  Json timings;
};

class WireFormat {
 public:
  virtual ~WireFormat() = default;

  // Prefix of the reply id.
  virtual const char* id_prefix() const = 0;
  // Events sent when a stream opens, before the first token.
  virtual std::vector<Json> StreamStart(const Reply& reply) const = 0;
  // The event carrying one text delta.
  virtual Json StreamDelta(const Reply& reply, const std::string& delta) const = 0;
  // Events that end a stream, before "data: [DONE]".
  virtual std::vector<Json> StreamEnd(const Reply& reply, const ReplyEnd& end) const = 0;
  // The event reporting a failure mid-stream; `error` is {code, type, message}.
  virtual Json StreamError(const Json& error) const = 0;
  // The whole answer as one JSON body.
  virtual Json Body(const Reply& reply, const ReplyEnd& end) const = 0;
};

std::shared_ptr<const WireFormat> ChatWireFormat();        // POST /v1/chat/completions
std::shared_ptr<const WireFormat> CompletionWireFormat();  // POST /v1/completions
std::shared_ptr<const WireFormat> AskWireFormat();         // POST /v1/ask

// The citations of `reply`'s sources that its text cites.
Json CitedSourcesJson(const Reply& reply);

}  // namespace ragd::app
