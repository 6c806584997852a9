#include "app/services/query_translation.h"

#include <utility>

#include "app/services/rag_prompt.h"
#include "app/services/short_generation.h"

namespace ragd::app {
namespace {

// Asked as a task on a quoted text, the 0.5B translates; asked the question
// itself, with only a system rule, it often answers it instead.
constexpr const char* kSystem =
    "Translate the user's question into English. Reply with the English question only.";
constexpr const char* kAsk = "Translate into English: ";
constexpr int kMaxTokens = 64;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The translation in `reply`, or why there is none: a small model may come
// back with nothing, or with the question still in its language.
Result<std::string> Accept(std::string_view reply) {
  std::string translated = CleanTranslation(reply);
  if (translated.empty()) return Status::Internal("the query translation came back empty");
  // The message reaches the server's log: it does not quote the question.
  if (std::string_view(DetectQuestionLanguage(translated).code) != "en")
    return Status::Internal("the query translation came back in another language");
  return translated;
}

}  // namespace

Result<inference::GenerationRequest> TranslationRequest(const inference::Engine& engine,
                                                        std::string_view text) {
  if (engine.chat_template() == inference::ChatTemplate::kNone)
    return Status::Unsupported("a base model does not translate on request");
  auto ids = engine.FormatChat({{"system", kSystem}, {"user", kAsk + OneLine(text)}});
  if (!ids.ok()) return ids.status();
  return OneLineRequest(std::move(ids).value(), kMaxTokens);
}

std::string CleanTranslation(std::string_view reply) {
  reply = reply.substr(0, reply.find('\n'));
  while (!reply.empty() && IsSpace(reply.front())) reply.remove_prefix(1);
  while (!reply.empty() && IsSpace(reply.back())) reply.remove_suffix(1);
  if (reply.size() >= 2 && (reply.front() == '"' || reply.front() == '\'') && reply.back() == reply.front())
    reply = reply.substr(1, reply.size() - 2);
  return std::string(reply);
}

Translator TranslateWith(const inference::Engine& engine, inference::Generator& generator,
                         std::chrono::milliseconds timeout, uint64_t cache_scope) {
  return [&engine, &generator, timeout, cache_scope](std::string_view text) -> Result<std::string> {
    auto request = TranslationRequest(engine, text);
    if (!request.ok()) return request.status();
    request->cache_scope = cache_scope;
    auto reply = RunShortGeneration(generator, *request, timeout, "the query translation");
    if (!reply.ok()) return reply.status();
    return Accept(reply->text);
  };
}

Translator TranslateWithEngine(inference::Engine& engine) {
  return [&engine](std::string_view text) -> Result<std::string> {
    auto request = TranslationRequest(engine, text);
    if (!request.ok()) return request.status();
    auto reply = RunShortGeneration(engine, *request);
    if (!reply.ok()) return reply.status();
    return Accept(reply->text);
  };
}

}  // namespace ragd::app
