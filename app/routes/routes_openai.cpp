// The OpenAI-compatible API: models, chat completions, completions,
// embeddings, and llama.cpp's tokenize/detokenize.
#include <chrono>

#include "app/routes/request_options.h"
#include "app/routes/routes.h"
#include "app/services/admission.h"
#include "app/services/generation_runner.h"
#include "app/services/model_routing.h"

namespace ragd::app {
namespace {

Json ModelJson(const std::string& id) {
  return {{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "ragd"}};
}

// An LLM with what a client needs to size its requests.
Json LlmJson(const LanguageModel& m) {
  const inference::Engine& e = *m.engine;
  Json j = ModelJson(m.id);
  j["context_length"] = e.context_length();
  j["architecture"] = e.architecture();
  j["quantization"] = e.info().quantization;
  j["parameters"] = e.info().parameters;
  j["size_bytes"] = e.model_file_bytes();
  j["chat_template"] = std::string(inference::ChatTemplateName(e.chat_template()));
  return j;
}

// A RAG pseudo-model: answers from the corpus with `llm`.
Json RagModelJson(const AppContext& ctx, const char* id, const LanguageModel& llm) {
  Json j = ModelJson(id);
  j["answer_model"] = llm.id;
  j["context_length"] = llm.engine->context_length();
  j["top_k"] = ctx.config.retrieval.top_k;
  return j;
}

GenerationOptions DefaultOptions(const AppContext& ctx) {
  GenerationOptions o;
  o.max_tokens = static_cast<int>(ctx.config.inference.max_tokens);
  return o;
}

std::string Base64Floats(const std::vector<float>& v) {
  static const char* kChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  const size_t n = v.size() * sizeof(float);
  std::string out;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t chunk = bytes[i] << 16;
    if (i + 1 < n) chunk |= bytes[i + 1] << 8;
    if (i + 2 < n) chunk |= bytes[i + 2];
    out += kChars[(chunk >> 18) & 63];
    out += kChars[(chunk >> 12) & 63];
    out += i + 1 < n ? kChars[(chunk >> 6) & 63] : '=';
    out += i + 2 < n ? kChars[chunk & 63] : '=';
  }
  return out;
}

HttpResponse ChatCompletions(AppContext& ctx, const HttpRequest& req, HttpExchange& ex,
                             const accounts::User& user) {
  auto body = ParseJsonObject(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  auto choice = ReadModelChoice(ctx, *body);
  if (!choice.ok()) return ErrorResponse(choice.status());
  const bool rag = choice->rag;
  auto messages = ReadMessages(*body);
  if (!messages.ok()) return ErrorResponse(messages.status());
  const inference::Engine& engine = *choice->llm->engine;
  auto opts = ReadChatOptions(*body, req.body, DefaultOptions(ctx), engine.tokenizer().vocab_size());
  if (!opts.ok()) return ErrorResponse(opts.status());
  if (Status st = CheckOptionsForModel(*choice, *opts); !st.ok()) return ErrorResponse(st);

  GenerationPlan plan = NewGenerationPlan(*choice, ChatWireFormat(), "/v1/chat/completions", *opts);
  std::vector<inference::ChatMessage> conversation = std::move(messages).value();
  if (rag) {
    if (conversation.back().role != "user")
      return ErrorResponse(Status::InvalidArgument("the last message must be from the user"));
    const std::string question = conversation.back().content;
    if (Status st = CheckQuestionLength(question); !st.ok()) return ErrorResponse(st);
    conversation.pop_back();
    const RagQuestion q{question, std::move(conversation), static_cast<int>(ctx.config.retrieval.top_k)};
    return RunRagGeneration(ctx, user, q, std::move(plan), ex);  // admitted before retrieval
  }
  Admission admission;
  // Admitted before the template is tokenized.
  if (auto refused = AdmitGeneration(ctx, user, plan, ChatPromptEstimate(conversation), &admission))
    return *refused;
  auto prompt = engine.FormatChat(conversation);
  if (!prompt.ok()) {
    admission.Cancel();
    return ErrorResponse(prompt.status());
  }
  plan.request.prompt = std::move(prompt).value();
  return RunGeneration(ctx, user, std::move(plan), std::move(admission), ex);
}

HttpResponse Completions(AppContext& ctx, const HttpRequest& req, HttpExchange& ex,
                         const accounts::User& user) {
  auto body = ParseJsonObject(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  auto choice = ReadModelChoice(ctx, *body);
  if (!choice.ok()) return ErrorResponse(choice.status());
  if (choice->rag) {
    return ErrorResponse(Status::InvalidArgument("model '" + choice->requested +
                                                 "' answers questions: use /v1/chat/completions or /v1/ask"));
  }
  const inference::Engine& engine = *choice->llm->engine;
  std::string prompt_text;
  std::vector<inference::TokenId> prompt_ids;  // the prompt given as token ids (a gateway in front does)
  auto p = body->find("prompt");
  if (p != body->end() && p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    prompt_text = (*p)[0].get<std::string>();
  } else if (p != body->end() && p->is_array() && !p->empty() && (*p)[0].is_number()) {
    for (const Json& id : *p) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() >= engine.tokenizer().vocab_size())
        return ErrorResponse(Status::InvalidArgument("field 'prompt': token ids must be integers under " +
                                                     std::to_string(engine.tokenizer().vocab_size())));
      prompt_ids.push_back(id.get<inference::TokenId>());
    }
  } else {
    auto s = RequiredString(*body, "prompt");
    if (!s.ok()) return ErrorResponse(Status::InvalidArgument("field 'prompt' must be a string"));
    prompt_text = *s;
  }
  auto opts = ReadCompletionOptions(*body, DefaultOptions(ctx), engine.tokenizer().vocab_size());
  if (!opts.ok()) return ErrorResponse(opts.status());
  if (Status st = CheckOptionsForModel(*choice, *opts); !st.ok()) return ErrorResponse(st);
  GenerationPlan plan = NewGenerationPlan(*choice, CompletionWireFormat(), "/v1/completions", *opts);
  // Admitted before the prompt is tokenized.
  Admission admission;
  const int64_t estimate = prompt_ids.empty() ? TextTokenEstimate(prompt_text) : std::ssize(prompt_ids);
  if (auto refused = AdmitGeneration(ctx, user, plan, estimate, &admission)) return *refused;
  auto ids = prompt_ids.empty() ? engine.PlainPrompt(prompt_text)
                                : Result<std::vector<inference::TokenId>>(prompt_ids);
  if (!ids.ok()) {
    admission.Cancel();
    return ErrorResponse(ids.status());
  }
  plan.request.prompt = std::move(ids).value();
  return RunGeneration(ctx, user, std::move(plan), std::move(admission), ex);
}

// WordPiece ids (the embedding model's vocabulary, as a client that
// tokenizes for the model sends them) back to text: pieces joined by spaces,
// "##" continuations glued on, [CLS]/[SEP]/[PAD] dropped. Re-tokenizing the
// text gives the same pieces for the uncased BERT vocabularies ragd loads.
Result<std::string> DecodeWordPieces(const retrieval::WordPieceTokenizer& tok, const Json& ids) {
  std::string text;
  for (const Json& id : ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= static_cast<int64_t>(tok.vocab_size()))
      return Status::InvalidArgument("field 'input': token ids must be integers under " +
                                     std::to_string(tok.vocab_size()) +
                                     " (the embedding model's vocabulary)");
    const auto i = static_cast<int32_t>(id.get<int64_t>());
    if (i == tok.cls_id() || i == tok.sep_id() || i == tok.pad_id()) continue;
    const std::string& piece = tok.TokenText(i);
    if (piece.rfind("##", 0) == 0 && !text.empty()) {
      text += piece.substr(2);
    } else {
      if (!text.empty()) text += ' ';
      text += piece;
    }
  }
  return text;
}

// "input": a string, an array of strings, an array of token ids, or an array
// of arrays of token ids (OpenAI's four forms; ids are WordPiece ids).
Result<std::vector<std::string>> ReadEmbeddingInputs(const AppContext& ctx, const Json& body) {
  constexpr size_t kMaxInputs = 256;
  auto in = body.find("input");
  if (in == body.end() || in->is_null()) return Status::InvalidArgument("missing field 'input'");
  if (in->is_string()) return std::vector<std::string>{in->get<std::string>()};
  const Status shape = Status::InvalidArgument(
      "field 'input' must be a string, an array of 1 to 256 strings, an array of token ids or an array of "
      "1 to 256 arrays of token ids");
  if (!in->is_array() || in->empty()) return shape;
  const retrieval::WordPieceTokenizer& tok = ctx.embedder->tokenizer();
  if ((*in)[0].is_number()) {
    auto text = DecodeWordPieces(tok, *in);
    if (!text.ok()) return text.status();
    return std::vector<std::string>{std::move(text).value()};
  }
  if (in->size() > kMaxInputs) return shape;
  std::vector<std::string> inputs;
  for (const Json& s : *in) {
    if (s.is_string()) {
      inputs.push_back(s.get<std::string>());
    } else if (s.is_array() && !s.empty()) {
      auto text = DecodeWordPieces(tok, s);
      if (!text.ok()) return text.status();
      inputs.push_back(std::move(text).value());
    } else {
      return shape;
    }
  }
  return inputs;
}

HttpResponse Embeddings(AppContext& ctx, const HttpRequest& req, const accounts::User& user) {
  auto body = ParseJsonObject(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  if (Status st = RefuseUnknownFields(*body, {"model", "input", "encoding_format", "dimensions", "user"},
                                      "/v1/embeddings");
      !st.ok())
    return ErrorResponse(st);
  auto dimensions = OptionalInt(*body, "dimensions", 1, 1 << 16);
  if (!dimensions.ok()) return ErrorResponse(dimensions.status());
  if (dimensions->has_value() && **dimensions != ctx.embedder->dimension()) {
    return ErrorResponse(Status::InvalidArgument(
        "field 'dimensions' must be " + std::to_string(ctx.embedder->dimension()) + " (the dimension of " +
        ctx.embedding_id + "; ragd does not shorten embeddings)"));
  }
  auto model = OptionalString(*body, "model", 256);
  if (!model.ok()) return ErrorResponse(model.status());
  if (model->has_value() && **model != ctx.embedding_id)
    return HttpResponse::Error(404, "not_found_error",
                               "embedding model '" + **model + "' does not exist; see GET /v1/models");
  auto format = OptionalString(*body, "encoding_format", 16);
  if (!format.ok()) return ErrorResponse(format.status());
  const std::string encoding = format->value_or("float");
  if (encoding != "float" && encoding != "base64")
    return ErrorResponse(Status::InvalidArgument("field 'encoding_format' must be \"float\" or \"base64\""));
  auto read = ReadEmbeddingInputs(ctx, *body);
  if (!read.ok()) return ErrorResponse(read.status());
  const std::vector<std::string> inputs = std::move(read).value();
  int64_t tokens = 0;
  const int64_t n_ctx = static_cast<int64_t>(ctx.embedder->max_tokens());
  for (const std::string& s : inputs) {
    if (s.empty())
      return ErrorResponse(Status::InvalidArgument("field 'input' must not contain empty strings"));
    tokens += std::min(n_ctx, TextTokenEstimate(s));
  }
  // Admitted on the estimate before the inputs are tokenized, then resized.
  Admission admission;
  if (auto refused = Admit(ctx, user, tokens, "/v1/embeddings", &admission)) return *refused;
  tokens = 0;
  for (const std::string& s : inputs) {
    const int64_t n = static_cast<int64_t>(ctx.embedder->CountTokens(s));
    // Never truncate silently: the model sees at most n_ctx tokens with [CLS] and [SEP].
    if (n + 2 > n_ctx) {
      admission.Cancel();
      return ContextLengthRefusal(ctx.metrics,
                                  "an input has " + std::to_string(n + 2) +
                                      " tokens; the embedding model reads at most " + std::to_string(n_ctx),
                                  n + 2, n_ctx);
    }
    tokens += n;
  }
  if (auto refused = admission.Resize(ctx.metrics, tokens)) {
    admission.Cancel();
    return *refused;
  }
  auto vectors = ctx.embedder->Embed(inputs);
  if (!vectors.ok()) {
    admission.Cancel();
    return ErrorResponse(vectors.status());
  }
  admission.Settle(tokens, 0, /*completed=*/true);
  ctx.metrics.CountEmbeddingTokens(tokens);
  Json data = Json::array();
  for (size_t i = 0; i < vectors->size(); ++i) {
    Json e = {{"object", "embedding"}, {"index", i}};
    if (encoding == "base64")
      e["embedding"] = Base64Floats((*vectors)[i]);
    else
      e["embedding"] = (*vectors)[i];
    data.push_back(e);
  }
  return JsonResponse(200, {{"object", "list"},
                            {"model", ctx.embedding_id},
                            {"data", data},
                            {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
}

// The longest text /tokenize takes: more than any context holds, at well
// under the JSON body limit, so one request's tokenizing time stays short.
constexpr size_t kMaxTokenizeBytes = 256 << 10;

HttpResponse Tokenize(AppContext& ctx, const HttpRequest& req, const accounts::User& user) {
  if (auto refused = AdmitRequest(ctx, user)) return *refused;
  auto body = ParseJsonObject(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  auto content = RequiredString(*body, "content", kMaxTokenizeBytes);
  if (!content.ok()) return ErrorResponse(content.status());
  auto add_special = OptionalBool(*body, "add_special");
  if (!add_special.ok()) return ErrorResponse(add_special.status());
  auto with_pieces = OptionalBool(*body, "with_pieces");
  if (!with_pieces.ok()) return ErrorResponse(with_pieces.status());
  auto choice = ReadModelChoice(ctx, *body);  // the tokenizer of the model named, else the answer model's
  if (!choice.ok()) return ErrorResponse(choice.status());
  const inference::Engine& engine = *choice->llm->engine;
  const inference::Tokenizer& tok = engine.tokenizer();
  auto ids = tok.Encode(*content);
  if (!ids.ok()) return ErrorResponse(ids.status());
  if (add_special->value_or(false) && tok.add_bos()) ids->insert(ids->begin(), tok.bos_id());
  Json tokens = Json::array();
  for (inference::TokenId id : *ids) {
    if (with_pieces->value_or(false)) {
      auto piece = tok.TokenBytes(id);
      tokens.push_back({{"id", id}, {"piece", piece.ok() ? *piece : ""}});
    } else {
      tokens.push_back(id);
    }
  }
  return JsonResponse(
      200, {{"tokens", tokens}, {"count", ids->size()}, {"max_model_len", engine.context_length()}});
}

HttpResponse Detokenize(AppContext& ctx, const HttpRequest& req, const accounts::User& user) {
  if (auto refused = AdmitRequest(ctx, user)) return *refused;
  auto body = ParseJsonObject(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  auto choice = ReadModelChoice(ctx, *body);  // the tokenizer of the model named, else the answer model's
  if (!choice.ok()) return ErrorResponse(choice.status());
  const inference::Engine& engine = *choice->llm->engine;
  const inference::Tokenizer& tok = engine.tokenizer();
  auto it = body->find("tokens");
  if (it == body->end() || !it->is_array())
    return ErrorResponse(Status::InvalidArgument("field 'tokens' must be an array of token ids"));
  std::vector<inference::TokenId> ids;
  for (const Json& t : *it) {
    if (!t.is_number_integer())
      return ErrorResponse(Status::InvalidArgument("field 'tokens' must hold integers"));
    const int64_t v = t.get<int64_t>();
    if (v < 0 || v >= tok.vocab_size())
      return ErrorResponse(
          Status::InvalidArgument("field 'tokens' holds " + std::to_string(v) + ", outside the vocabulary"));
    ids.push_back(static_cast<inference::TokenId>(v));
  }
  auto text = tok.Decode(ids);
  if (!text.ok()) return ErrorResponse(text.status());
  return JsonResponse(200, {{"content", *text}});
}

}  // namespace

void RegisterOpenAiRoutes(HttpServer& http, AppContext& ctx) {
  http.Route(
      "GET", "/v1/models",
      WithUser(ctx, Access::kUser, true, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        Json data = Json::array();
        for (const auto& m : ctx.llms) data.push_back(LlmJson(*m));
        data.push_back(RagModelJson(ctx, kRagModelId, DefaultLlm(ctx)));
        data.push_back(RagModelJson(ctx, kRagFastModelId, FastLlm(ctx)));
        data.push_back(ModelJson(ctx.embedding_id));
        return JsonResponse(200, {{"object", "list"}, {"data", data}});
      }));
  http.Route(
      "GET", "/v1/models/:id",
      WithUser(
          ctx, Access::kUser, true, [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
            const std::string& id = req.params.at("id");
            if (LanguageModel* m = FindLlm(ctx, id)) return JsonResponse(200, LlmJson(*m));
            if (id == kRagModelId) return JsonResponse(200, RagModelJson(ctx, kRagModelId, DefaultLlm(ctx)));
            if (id == kRagFastModelId)
              return JsonResponse(200, RagModelJson(ctx, kRagFastModelId, FastLlm(ctx)));
            if (id == ctx.embedding_id) return JsonResponse(200, ModelJson(ctx.embedding_id));
            return ErrorResponse(Status::NotFound("model '" + id + "' does not exist; see GET /v1/models"));
          }));
  http.Route("POST", "/v1/chat/completions",
             WithUser(ctx, Access::kUser, true,
                      [&ctx](const HttpRequest& req, HttpExchange& ex, const accounts::User& u) {
                        return ChatCompletions(ctx, req, ex, u);
                      }));
  http.Route("POST", "/v1/completions",
             WithUser(ctx, Access::kUser, true,
                      [&ctx](const HttpRequest& req, HttpExchange& ex, const accounts::User& u) {
                        return Completions(ctx, req, ex, u);
                      }));
  http.Route("POST", "/v1/embeddings",
             WithUser(ctx, Access::kUser, true,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& u) {
                        return Embeddings(ctx, req, u);
                      }));
  const UserHandler tokenize = [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& u) {
    return Tokenize(ctx, req, u);
  };
  const UserHandler detokenize = [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& u) {
    return Detokenize(ctx, req, u);
  };
  http.Route("POST", "/tokenize", WithUser(ctx, Access::kUser, true, tokenize));
  http.Route("POST", "/v1/tokenize", WithUser(ctx, Access::kUser, true, tokenize));
  http.Route("POST", "/detokenize", WithUser(ctx, Access::kUser, true, detokenize));
  http.Route("POST", "/v1/detokenize", WithUser(ctx, Access::kUser, true, detokenize));
}

}  // namespace ragd::app
