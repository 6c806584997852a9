#include "app/routes/request_options.h"

namespace ragd::app {

#define RAGD_TRY_ASSIGN(var, expr) \
  auto var = (expr);               \
  if (!var.ok()) return var.status();

Result<GenerationOptions> ReadGenerationOptions(const Json& body, const GenerationOptions& defaults,
                                                int vocab_size) {
  GenerationOptions o = defaults;
  RAGD_TRY_ASSIGN(temperature, OptionalNumber(body, "temperature", 0, 2));
  if (*temperature) o.sampling.temperature = static_cast<float>(**temperature);
  RAGD_TRY_ASSIGN(top_p, OptionalNumber(body, "top_p", 0, 1));
  if (*top_p) o.sampling.top_p = static_cast<float>(**top_p);
  RAGD_TRY_ASSIGN(top_k, OptionalInt(body, "top_k", 0, vocab_size));
  if (*top_k) o.sampling.top_k = static_cast<int>(**top_k);
  RAGD_TRY_ASSIGN(min_p, OptionalNumber(body, "min_p", 0, 1));
  if (*min_p) o.sampling.min_p = static_cast<float>(**min_p);
  RAGD_TRY_ASSIGN(presence, OptionalNumber(body, "presence_penalty", -2, 2));
  if (*presence) o.sampling.presence_penalty = static_cast<float>(**presence);
  RAGD_TRY_ASSIGN(frequency, OptionalNumber(body, "frequency_penalty", -2, 2));
  if (*frequency) o.sampling.frequency_penalty = static_cast<float>(**frequency);
  RAGD_TRY_ASSIGN(repeat, OptionalNumber(body, "repeat_penalty", 0.01, 10));
  if (*repeat) o.sampling.repeat_penalty = static_cast<float>(**repeat);
  RAGD_TRY_ASSIGN(seed, OptionalInt(body, "seed", INT64_MIN, INT64_MAX));
  if (*seed) o.sampling.seed = static_cast<uint64_t>(**seed);

  RAGD_TRY_ASSIGN(max_tokens, OptionalInt(body, "max_tokens", 1, 1 << 20));
  RAGD_TRY_ASSIGN(max_completion, OptionalInt(body, "max_completion_tokens", 1, 1 << 20));
  if (*max_completion) o.max_tokens = static_cast<int>(**max_completion);
  if (*max_tokens) o.max_tokens = static_cast<int>(**max_tokens);

  RAGD_TRY_ASSIGN(n, OptionalInt(body, "n", 1, 1));  // one choice per request
  (void)n;

  if (auto it = body.find("logit_bias"); it != body.end() && !it->is_null()) {
    if (!it->is_object())
      return Status::InvalidArgument("field 'logit_bias' must be an object of token id -> bias");
    for (auto& [key, value] : it->items()) {
      int64_t id = -1;
      try {
        size_t used = 0;
        id = std::stoll(key, &used);
        if (used != key.size()) id = -1;
      } catch (...) {
      }
      if (id < 0 || id >= vocab_size)
        return Status::InvalidArgument("field 'logit_bias' has a key that is not a token id: '" + key + "'");
      if (!value.is_number() || value.get<double>() < -100 || value.get<double>() > 100)
        return Status::InvalidArgument("field 'logit_bias' values must be numbers between -100 and 100");
      o.sampling.logit_bias[static_cast<inference::TokenId>(id)] = value.get<float>();
    }
  }

  if (auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    o.stop.clear();
    if (it->is_string()) {
      o.stop.push_back(it->get<std::string>());
    } else if (it->is_array() && it->size() <= 4) {
      for (const auto& s : *it) {
        if (!s.is_string())
          return Status::InvalidArgument("field 'stop' must be a string or an array of strings");
        o.stop.push_back(s.get<std::string>());
      }
    } else {
      return Status::InvalidArgument("field 'stop' must be a string or an array of up to 4 strings");
    }
    for (const auto& s : o.stop)
      if (s.empty()) return Status::InvalidArgument("field 'stop' must not contain empty strings");
  }

  RAGD_TRY_ASSIGN(stream, OptionalBool(body, "stream"));
  o.stream = stream->value_or(defaults.stream);
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return Status::InvalidArgument("field 'stream_options' must be an object");
    RAGD_TRY_ASSIGN(usage, OptionalBool(*it, "include_usage"));
    o.include_usage = usage->value_or(false);
  }
  if (Status st = inference::ValidateSamplingOptions(o.sampling, vocab_size); !st.ok()) return st;
  return o;
}

namespace {

// The fields each route honours; anything else is refused (RefuseUnknownFields).
#define RAGD_SAMPLING_FIELDS                                                                                \
  "model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop", \
      "stream", "stream_options", "n", "presence_penalty", "frequency_penalty", "repeat_penalty",           \
      "logit_bias", "logprobs", "user"

Status ReadResponseFormat(const Json& body, std::string_view raw_body, GenerationOptions* o) {
  auto it = body.find("response_format");
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return Status::InvalidArgument("field 'response_format' must be an object");
  RAGD_TRY_ASSIGN(type, RequiredString(*it, "type", 32));
  if (*type == "text") {
    return RefuseUnknownFields(*it, {"type"}, "response_format of type \"text\"");
  }
  if (*type == "json_object") {
    if (Status st = RefuseUnknownFields(*it, {"type"}, "response_format of type \"json_object\""); !st.ok())
      return st;
    o->grammar = inference::JsonGrammar::AnyObject();
    return Status::Ok();
  }
  if (*type != "json_schema") {
    return Status::InvalidArgument(
        "field 'response_format.type' must be \"text\", \"json_object\" or \"json_schema\"");
  }
  if (Status st = RefuseUnknownFields(*it, {"type", "json_schema"}, "response_format"); !st.ok()) return st;
  auto js = it->find("json_schema");
  if (js == it->end() || !js->is_object())
    return Status::InvalidArgument("field 'response_format.json_schema' must be an object");
  if (Status st = RefuseUnknownFields(*js, {"name", "schema", "strict", "description"},
                                      "response_format.json_schema");
      !st.ok())
    return st;
  RAGD_TRY_ASSIGN(name, OptionalString(*js, "name", 64));
  RAGD_TRY_ASSIGN(strict, OptionalBool(*js, "strict"));
  RAGD_TRY_ASSIGN(description, OptionalString(*js, "description"));
  auto schema = js->find("schema");
  if (schema == js->end() || schema->is_null()) {
    o->grammar = inference::JsonGrammar::AnyObject();  // OpenAI: no schema, any JSON object
    return Status::Ok();
  }
  if (!schema->is_object() && !schema->is_boolean())
    return Status::InvalidArgument("field 'response_format.json_schema.schema' must be an object");
  // Properties are written in the schema's order, which `body` (keys sorted)
  // has lost: the schema is read again from the text as sent.
  const auto ordered = nlohmann::ordered_json::parse(raw_body, nullptr, /*allow_exceptions=*/false);
  if (ordered.is_discarded()) return Status::InvalidArgument("request body is not valid JSON");
  auto grammar =
      inference::JsonGrammar::FromSchema(ordered["response_format"]["json_schema"]["schema"].dump());
  if (!grammar.ok()) {
    return Status::InvalidArgument("field 'response_format.json_schema.schema': " +
                                   grammar.status().message() + "; see the supported subset in docs/api.md");
  }
  o->grammar = std::move(grammar).value();
  return Status::Ok();
}

}  // namespace

Result<GenerationOptions> ReadChatOptions(const Json& body, std::string_view raw_body,
                                          const GenerationOptions& defaults, int vocab_size) {
  if (Status st =
          RefuseUnknownFields(body, {RAGD_SAMPLING_FIELDS, "messages", "top_logprobs", "response_format"},
                              "/v1/chat/completions");
      !st.ok())
    return st;
  RAGD_TRY_ASSIGN(o, ReadGenerationOptions(body, defaults, vocab_size));
  RAGD_TRY_ASSIGN(logprobs, OptionalBool(body, "logprobs"));
  RAGD_TRY_ASSIGN(top, OptionalInt(body, "top_logprobs", 0, inference::kMaxTopLogprobs));
  if (top->has_value() && !logprobs->value_or(false))
    return Status::InvalidArgument("field 'top_logprobs' needs 'logprobs': true");
  if (logprobs->value_or(false)) o->logprobs = static_cast<int>(top->value_or(0));
  if (Status st = ReadResponseFormat(body, raw_body, &*o); !st.ok()) return st;
  return o;
}

Result<GenerationOptions> ReadCompletionOptions(const Json& body, const GenerationOptions& defaults,
                                                int vocab_size) {
  if (Status st = RefuseUnknownFields(body, {RAGD_SAMPLING_FIELDS, "prompt"}, "/v1/completions"); !st.ok())
    return st;
  RAGD_TRY_ASSIGN(o, ReadGenerationOptions(body, defaults, vocab_size));
  RAGD_TRY_ASSIGN(logprobs, OptionalInt(body, "logprobs", 0, inference::kMaxTopLogprobs));
  if (logprobs->has_value()) o->logprobs = static_cast<int>(**logprobs);
  return o;
}

#undef RAGD_SAMPLING_FIELDS

Status CheckOptionsForModel(const ModelChoice& choice, const GenerationOptions& opts) {
  const char* field = opts.grammar ? "response_format" : opts.logprobs >= 0 ? "logprobs" : nullptr;
  if (field == nullptr) return Status::Ok();
  if (choice.rag)
    return Status::InvalidArgument(std::string("field '") + field + "' is not supported with model '" +
                                   choice.requested + "' (answers from the corpus, with citations)");
  if (choice.llm->scheduler == nullptr)
    return Status::InvalidArgument(std::string("field '") + field + "' is not supported with model '" +
                                   choice.requested + "' (generated by an upstream pool)");
  return Status::Ok();
}

Result<std::vector<inference::ChatMessage>> ReadMessages(const Json& body) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty())
    return Status::InvalidArgument("field 'messages' must be a non-empty array");
  std::vector<inference::ChatMessage> out;
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return Status::InvalidArgument("field '" + where + "' must be an object");
    auto role = RequiredString(m, "role", 32);
    if (!role.ok()) return Status::InvalidArgument(where + ": " + role.status().message());
    std::string r = *role == "developer" ? "system" : *role;
    if (r != "system" && r != "user" && r != "assistant")
      return Status::InvalidArgument("field '" + where + ".role' must be system, user or assistant");
    std::string content;
    auto c = m.find("content");
    if (c == m.end() || c->is_null()) {
      content = "";
    } else if (c->is_string()) {
      content = c->get<std::string>();
    } else if (c->is_array()) {
      for (const Json& part : *c) {
        // value() with a Json default: a "type" that is not a string compares unequal, never throws.
        if (!part.is_object() || part.value("type", Json()) != "text" || !part.contains("text") ||
            !part["text"].is_string())
          return Status::InvalidArgument("field '" + where + ".content' supports only text parts");
        content += part["text"].get<std::string>();
      }
    } else {
      return Status::InvalidArgument("field '" + where +
                                     ".content' must be a string or an array of text parts");
    }
    out.push_back({r, content});
  }
  return out;
}

Result<ModelChoice> ReadModelChoice(AppContext& ctx, const Json& body, const char* fallback) {
  auto model = OptionalString(body, "model", 256);
  if (!model.ok()) return model.status();
  if (!model->has_value() && fallback != nullptr) *model = fallback;
  return ChooseModel(ctx, *model);
}

GenerationPlan NewGenerationPlan(const ModelChoice& choice, std::shared_ptr<const WireFormat> format,
                                 std::string route, const GenerationOptions& opts) {
  GenerationPlan plan;
  plan.llm = choice.llm;
  plan.format = std::move(format);
  plan.route = std::move(route);
  plan.model_id = choice.requested;
  plan.stream = opts.stream;
  plan.include_usage = opts.include_usage;
  plan.request.sampling = opts.sampling;
  plan.request.max_tokens = opts.max_tokens;
  plan.request.stop = opts.stop;
  plan.request.logprobs = opts.logprobs;
  plan.request.grammar = opts.grammar;
  return plan;
}

}  // namespace ragd::app
