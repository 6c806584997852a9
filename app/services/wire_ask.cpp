// ragd's /v1/ask format: an "ask.answer" body, or typed events (citations,
// delta, done, error) when streamed.
#include "app/services/wire_format.h"

namespace ragd::app {
namespace {

// Whether the sources support the answer as a whole (true when unchecked).
bool Grounded(const Reply& r) {
  return r.attribution.is_object() ? r.attribution["grounded"].get<bool>() : true;
}
Json Sentences(const Reply& r) {
  return r.attribution.is_object() ? r.attribution["sentences"] : Json::array();
}
// The end's optional fields: a follow-up's rewrite, then what the caller
// added (GenerationPlan::on_finished).
Json WithExtra(Json j, const Reply& r) {
  if (!r.rewritten_question.empty()) j["rewritten_question"] = r.rewritten_question;
  if (r.extra.is_object()) j.update(r.extra);
  return j;
}

class AskFormat final : public WireFormat {
 public:
  const char* id_prefix() const override { return "ask-"; }

  std::vector<Json> StreamStart(const Reply& r) const override {
    return {{{"type", "citations"}, {"id", r.id}, {"citations", CitationsJson(*r.sources)}}};
  }

  Json StreamDelta(const Reply&, const std::string& delta) const override {
    return {{"type", "delta"}, {"content", delta}};
  }

  std::vector<Json> StreamEnd(const Reply& r, const ReplyEnd& end) const override {
    return {WithExtra({{"type", "done"},
                       {"finish_reason", end.finish_reason},
                       {"usage", end.usage},
                       {"citations", CitedSourcesJson(r)},
                       {"answer_model", r.answer_model},
                       {"grounded", Grounded(r)},
                       {"sentences", Sentences(r)},
                       {"timings", end.timings}},
                      r)};
  }

  Json StreamError(const Json& error) const override { return {{"type", "error"}, {"error", error}}; }

  Json Body(const Reply& r, const ReplyEnd& end) const override {
    return WithExtra({{"id", r.id},
                      {"object", "ask.answer"},
                      {"created", r.created},
                      {"model", r.model_id},
                      {"answer", r.text},
                      {"finish_reason", end.finish_reason},
                      {"citations", CitedSourcesJson(r)},
                      {"answer_model", r.answer_model},
                      {"grounded", Grounded(r)},
                      {"sentences", Sentences(r)},
                      {"usage", end.usage},
                      {"timings", end.timings}},
                     r);
  }
};

}  // namespace

std::shared_ptr<const WireFormat> AskWireFormat() {
  static const auto kFormat = std::make_shared<const AskFormat>();
  return kFormat;
}

}  // namespace ragd::app
