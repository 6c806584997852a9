// The OpenAI formats: chat completions ("chat.completion",
// "chat.completion.chunk") and text completions ("text_completion").
#include "app/services/wire_format.h"

namespace ragd::app {
namespace {

Json Envelope(const Reply& r, const char* object) {
  return {{"id", r.id}, {"object", object}, {"created", r.created}, {"model", r.model_id}};
}

// The last chunk (finish reason, timings), then the usage chunk when the
// client asked for it (stream_options.include_usage).
std::vector<Json> StreamEndWithUsage(const Reply& r, const ReplyEnd& end, Json last, const char* object) {
  last["timings"] = end.timings;
  if (!r.include_usage) return {last};
  Json usage = Envelope(r, object);
  usage["choices"] = Json::array();
  usage["usage"] = end.usage;
  return {last, usage};
}

// What ragd-rag adds to OpenAI's last chunk or body: which model answered,
// the rewrite a follow-up was searched and answered as, the attribution.
void AddRagFields(const Reply& r, Json* j) {
  (*j)["answer_model"] = r.answer_model;
  if (!r.rewritten_question.empty()) (*j)["rewritten_question"] = r.rewritten_question;
  if (r.attribution.is_object()) (*j)["attribution"] = r.attribution;
}

// OpenAI writes impossible tokens' log-probabilities as -9999 (JSON has no -inf).
double Finite(float logprob) { return logprob > -9999.0f ? logprob : -9999.0; }

Json Bytes(const std::string& text) {
  Json bytes = Json::array();
  for (unsigned char c : text) bytes.push_back(c);
  return bytes;
}

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}], "refusal": null}.
Json ChatLogprobs(const std::vector<ReplyToken>& tokens) {
  Json content = Json::array();
  for (const ReplyToken& t : tokens) {
    Json top = Json::array();
    for (const auto& [text, logprob] : t.top)
      top.push_back({{"token", text}, {"logprob", Finite(logprob)}, {"bytes", Bytes(text)}});
    content.push_back(
        {{"token", t.text}, {"logprob", Finite(t.logprob)}, {"bytes", Bytes(t.text)}, {"top_logprobs", top}});
  }
  return {{"content", content}, {"refusal", nullptr}};
}

// Completions (the legacy shape): parallel arrays, offsets in bytes of the text.
Json CompletionLogprobs(const std::vector<ReplyToken>& tokens) {
  Json text = Json::array(), logprobs = Json::array(), top = Json::array(), offsets = Json::array();
  for (const ReplyToken& t : tokens) {
    text.push_back(t.text);
    logprobs.push_back(Finite(t.logprob));
    Json alternatives = Json::object();
    for (const auto& [alt, logprob] : t.top) alternatives[alt] = Finite(logprob);
    top.push_back(alternatives);
    offsets.push_back(t.offset);
  }
  return {{"tokens", text}, {"token_logprobs", logprobs}, {"top_logprobs", top}, {"text_offset", offsets}};
}

constexpr const char* kChunk = "chat.completion.chunk";
constexpr const char* kText = "text_completion";

class ChatFormat final : public WireFormat {
 public:
  const char* id_prefix() const override { return "chatcmpl-"; }

  std::vector<Json> StreamStart(const Reply& r) const override {
    Json first = Envelope(r, kChunk);
    first["choices"] = Json::array(
        {{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}}});
    if (r.rag) first["citations"] = CitationsJson(*r.sources);
    return {first};
  }

  Json StreamDelta(const Reply& r, const std::string& delta) const override {
    Json chunk = Envelope(r, kChunk);
    Json choice = {{"index", 0}, {"delta", {{"content", delta}}}, {"finish_reason", nullptr}};
    if (r.logprobs) choice["logprobs"] = ChatLogprobs(r.delta_tokens);
    chunk["choices"] = Json::array({choice});
    return chunk;
  }

  std::vector<Json> StreamEnd(const Reply& r, const ReplyEnd& end) const override {
    Json last = Envelope(r, kChunk);
    last["choices"] =
        Json::array({{{"index", 0}, {"delta", Json::object()}, {"finish_reason", end.finish_reason}}});
    if (r.rag) AddRagFields(r, &last);
    return StreamEndWithUsage(r, end, std::move(last), kChunk);
  }

  Json StreamError(const Json& error) const override { return {{"error", error}}; }

  Json Body(const Reply& r, const ReplyEnd& end) const override {
    Json message = {{"role", "assistant"}, {"content", r.text}};
    if (r.rag) message["citations"] = CitedSourcesJson(r);
    Json body = Envelope(r, "chat.completion");
    Json choice = {
        {"index", 0}, {"message", message}, {"finish_reason", end.finish_reason}, {"logprobs", nullptr}};
    if (r.logprobs) choice["logprobs"] = ChatLogprobs(r.tokens);
    body["choices"] = Json::array({choice});
    body["usage"] = end.usage;
    body["timings"] = end.timings;
    if (r.rag) AddRagFields(r, &body);
    return body;
  }
};

Json TextChoice(const std::string& text, const Json& finish_reason) {
  return {{"index", 0}, {"text", text}, {"finish_reason", finish_reason}, {"logprobs", nullptr}};
}

class CompletionFormat final : public WireFormat {
 public:
  const char* id_prefix() const override { return "cmpl-"; }

  std::vector<Json> StreamStart(const Reply&) const override { return {}; }

  Json StreamDelta(const Reply& r, const std::string& delta) const override {
    Json chunk = Envelope(r, kText);
    Json choice = TextChoice(delta, nullptr);
    if (r.logprobs) choice["logprobs"] = CompletionLogprobs(r.delta_tokens);
    chunk["choices"] = Json::array({choice});
    return chunk;
  }

  std::vector<Json> StreamEnd(const Reply& r, const ReplyEnd& end) const override {
    Json last = Envelope(r, kText);
    last["choices"] = Json::array({TextChoice("", end.finish_reason)});
    return StreamEndWithUsage(r, end, std::move(last), kText);
  }

  Json StreamError(const Json& error) const override { return {{"error", error}}; }

  Json Body(const Reply& r, const ReplyEnd& end) const override {
    Json body = Envelope(r, kText);
    Json choice = TextChoice(r.text, end.finish_reason);
    if (r.logprobs) choice["logprobs"] = CompletionLogprobs(r.tokens);
    body["choices"] = Json::array({choice});
    body["usage"] = end.usage;
    body["timings"] = end.timings;
    return body;
  }
};

}  // namespace

std::shared_ptr<const WireFormat> ChatWireFormat() {
  static const auto kFormat = std::make_shared<const ChatFormat>();
  return kFormat;
}

std::shared_ptr<const WireFormat> CompletionWireFormat() {
  static const auto kFormat = std::make_shared<const CompletionFormat>();
  return kFormat;
}

Json CitedSourcesJson(const Reply& reply) {
  const std::set<int> cited = CitedNumbers(reply.text, static_cast<int>(reply.sources->size()));
  return CitationsJson(*reply.sources, &cited);
}

}  // namespace ragd::app
