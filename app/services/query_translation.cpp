#include "app/services/query_translation.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "app/services/rag_prompt.h"

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
  inference::GenerationRequest request;
  request.prompt = std::move(ids).value();
  request.sampling.temperature = 0;
  request.max_tokens = kMaxTokens;
  request.stop = {"\n"};
  return request;
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
    // Shared with the generator's callback, which may outlive this call
    // when it gives up waiting.
    struct Reply {
      std::mutex mu;
      std::condition_variable cv;
      std::string text;   // guarded by mu
      Status error;       // guarded by mu
      bool done = false;  // guarded by mu
    };
    auto reply = std::make_shared<Reply>();
    auto handle = generator.Submit(*request, [reply](const inference::SchedulerEvent& e) {
      std::lock_guard<std::mutex> lock(reply->mu);
      if (e.kind == inference::SchedulerEvent::Kind::kToken) {
        reply->text += e.text;
        return true;
      }
      if (e.kind == inference::SchedulerEvent::Kind::kError) reply->error = e.error;
      reply->done = true;
      reply->cv.notify_all();
      return false;
    });
    if (!handle.ok()) return handle.status();
    std::unique_lock<std::mutex> lock(reply->mu);
    if (!reply->cv.wait_for(lock, timeout, [&] { return reply->done; })) {
      handle->Cancel();
      return Status::Unavailable("the query translation took longer than " + std::to_string(timeout.count()) +
                                 " ms");
    }
    if (!reply->error.ok()) return reply->error;
    return Accept(reply->text);
  };
}

Translator TranslateWithEngine(inference::Engine& engine) {
  return [&engine](std::string_view text) -> Result<std::string> {
    auto request = TranslationRequest(engine, text);
    if (!request.ok()) return request.status();
    auto generation = engine.Start(*request);
    if (!generation.ok()) return generation.status();
    std::string reply;
    for (;;) {
      auto chunk = (*generation)->Next();
      if (!chunk.ok()) return chunk.status();
      if (!*chunk) break;
      reply += (*chunk)->text;
    }
    return Accept(reply);
  };
}

}  // namespace ragd::app
