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
    chunk["choices"] =
        Json::array({{{"index", 0}, {"delta", {{"content", delta}}}, {"finish_reason", nullptr}}});
    return chunk;
  }

  std::vector<Json> StreamEnd(const Reply& r, const ReplyEnd& end) const override {
    Json last = Envelope(r, kChunk);
    last["choices"] =
        Json::array({{{"index", 0}, {"delta", Json::object()}, {"finish_reason", end.finish_reason}}});
    if (r.rag) {
      last["answer_model"] = r.answer_model;
      if (r.attribution.is_object()) last["attribution"] = r.attribution;
    }
    return StreamEndWithUsage(r, end, std::move(last), kChunk);
  }

  Json StreamError(const Json& error) const override { return {{"error", error}}; }

  Json Body(const Reply& r, const ReplyEnd& end) const override {
    Json message = {{"role", "assistant"}, {"content", r.text}};
    if (r.rag) message["citations"] = CitedSourcesJson(r);
    Json body = Envelope(r, "chat.completion");
    body["choices"] = Json::array(
        {{{"index", 0}, {"message", message}, {"finish_reason", end.finish_reason}, {"logprobs", nullptr}}});
    body["usage"] = end.usage;
    body["timings"] = end.timings;
    if (r.rag) {
      body["answer_model"] = r.answer_model;
      if (r.attribution.is_object()) body["attribution"] = r.attribution;
    }
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
    chunk["choices"] = Json::array({TextChoice(delta, nullptr)});
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
    body["choices"] = Json::array({TextChoice(r.text, end.finish_reason)});
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
