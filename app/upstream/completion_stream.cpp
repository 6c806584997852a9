#include "app/upstream/completion_stream.h"

#include <nlohmann/json.hpp>

namespace ragd::app::upstream {

using nlohmann::json;

namespace {

int64_t IntField(const json& j, const char* name) {
  auto it = j.find(name);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

std::string CompletionBody(const std::string& model, const inference::GenerationRequest& r) {
  const inference::SamplingOptions& s = r.sampling;
  json body = {{"model", model},
               {"prompt", r.prompt},
               {"max_tokens", r.max_tokens},
               {"temperature", s.temperature},
               {"top_p", s.top_p},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  // Fields beyond OpenAI's own go only when they differ from the defaults,
  // which every OpenAI-compatible server shares, so a strict server accepts the body.
  const inference::SamplingOptions defaults;
  if (s.top_k != defaults.top_k) body["top_k"] = s.top_k;
  if (s.min_p != defaults.min_p) body["min_p"] = s.min_p;
  if (s.repeat_penalty != defaults.repeat_penalty) body["repeat_penalty"] = s.repeat_penalty;
  if (s.presence_penalty != 0) body["presence_penalty"] = s.presence_penalty;
  if (s.frequency_penalty != 0) body["frequency_penalty"] = s.frequency_penalty;
  if (s.seed) body["seed"] = *s.seed;
  if (!s.logit_bias.empty()) {
    json bias = json::object();
    for (const auto& [id, v] : s.logit_bias) bias[std::to_string(id)] = v;
    body["logit_bias"] = bias;
  }
  if (!r.stop.empty()) body["stop"] = r.stop;
  return body.dump();
}

bool CompletionStream::Feed(std::string_view bytes, const TextSink& on_text) {
  pending_.append(bytes);
  size_t begin = 0;
  for (size_t nl; (nl = pending_.find('\n', begin)) != std::string::npos; begin = nl + 1) {
    std::string_view line(pending_.data() + begin, nl - begin);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (!line.starts_with("data:")) continue;  // blank separators, comments, other fields
    line.remove_prefix(5);
    if (line.starts_with(' ')) line.remove_prefix(1);
    if (!OnEvent(line, on_text)) {
      pending_.erase(0, nl + 1);
      return false;
    }
  }
  pending_.erase(0, begin);
  return true;
}

bool CompletionStream::OnEvent(std::string_view data, const TextSink& on_text) {
  if (data == "[DONE]") {
    done_ = true;
    return true;
  }
  const json j = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error_ = "the upstream sent an event that is not JSON";
    return false;
  }
  if (auto e = j.find("error"); e != j.end()) {
    auto message = e->is_object() ? e->find("message") : e->end();
    error_ = message != e->end() && message->is_string() ? message->get<std::string>() : e->dump();
    if (e->is_object()) error_status_ = static_cast<int>(IntField(*e, "code"));
    if (error_.empty()) error_ = "the upstream reported an error";
    return false;
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    usage_ = UpstreamUsage{IntField(*u, "prompt_tokens"), IntField(*u, "completion_tokens")};
  }
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return true;
  const json& c = (*choices)[0];
  if (auto f = c.find("finish_reason"); f != c.end() && f->is_string())
    finish_reason_ = f->get<std::string>();
  auto t = c.find("text");
  if (t != c.end() && t->is_string() && !t->get_ref<const std::string&>().empty())
    return on_text(t->get<std::string>());
  return true;
}

}  // namespace ragd::app::upstream
