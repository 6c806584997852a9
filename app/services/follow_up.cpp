#include "app/services/follow_up.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "app/services/query_translation.h"
#include "app/services/rag_prompt.h"
#include "app/services/short_generation.h"
#include "common/text.h"

namespace ragd::app {
namespace {

constexpr int kMaxTokens = 64;

// Told to rewrite "in the language of the follow-up question", the 1.5B kept
// the language of all six follow-ups of the labelled set; told "in
// English", it also rewrote well, but the answer is written in the
// question's language. Without the sentence on questions that already stand
// alone, it merged a change of subject into the earlier question ("Como
// faço backup da pasta de dados?" after a question on the rate limit); with
// it, it still turned "How do I change the port of ragd?" after a question
// on quotas into "What is the default port of ragd?".
constexpr const char* kAsk =
    "Rewrite the follow-up question as one complete question that can be understood without the earlier "
    "question, in the language of the follow-up question. If the follow-up question can already be "
    "understood on its own, reply with it unchanged. Reply with the question only.\n\n";

size_t CountWords(std::string_view s) {
  size_t n = 0;
  bool in_word = false;
  for (unsigned char c : s) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

// Punctuation around a word, as whole UTF-8 sequences (a byte of "¿" can
// end another letter).
constexpr std::string_view kEdges[] = {"?", "!", "¿", "¡", ",", ";", ":", "(", ")", "\"", "'", "«", "»", "."};

std::string_view Trimmed(std::string_view word) {
  for (bool trimmed = true; trimmed;) {
    trimmed = false;
    for (std::string_view e : kEdges) {
      if (word.starts_with(e)) {
        word.remove_prefix(e.size());
        trimmed = true;
      }
      if (word.ends_with(e)) {
        word.remove_suffix(e.size());
        trimmed = true;
      }
    }
  }
  return word;
}

// The words of `s` (split at white space) without the punctuation around them.
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find_first_of(" \t\n\r", pos);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view word = Trimmed(s.substr(pos, end - pos));
    if (!word.empty()) out.push_back(word);
    pos = end + 1;
  }
  return out;
}

// Whether every word of `question` that names something exactly (one with a
// digit or any of / _ . ` : "/healthz", "8080", "top_k") is in `rewritten`.
// Rewriting "Et que répond /healthz pendant le chargement des modèles ?",
// which nearly stands alone, the 1.5B wrote the earlier question, about
// /readyz, instead.
bool KeepsNames(std::string_view question, std::string_view rewritten) {
  for (std::string_view word : Words(question)) {
    const bool name = word.find_first_of("0123456789/_.`") != std::string_view::npos;
    if (name && rewritten.find(word) == std::string_view::npos) return false;
  }
  return true;
}

// Whether `rewritten` keeps at least half of the words of `question` that
// carry its meaning: those of four letters or more, whatever the case of
// their ASCII letters (AsciiLower: "Über" and "über" differ). After a
// question on the daily token quota, the 1.5B "rewrote" "How do I change
// the port of ragd?" into the earlier question, keeping none of "change",
// "port" and "ragd", and the answer was about the quota. A rewrite adds the
// topic to a follow-up and keeps its words: every accepted rewrite of the
// labelled sets' follow-ups kept at least half, most of them all.
bool KeepsWords(std::string_view question, std::string_view rewritten) {
  const auto letters = [](std::string_view w) {
    return std::count_if(w.begin(), w.end(),
                         [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
  };
  std::set<std::string> kept;
  for (std::string_view w : Words(rewritten)) kept.insert(AsciiLower(w));
  size_t words = 0, found = 0;
  for (std::string_view w : Words(question)) {
    if (letters(w) < 4) continue;
    ++words;
    found += kept.count(AsciiLower(w));
  }
  return 2 * found >= words;
}

// The rewrite in `reply`, or why there is none. The language is judged on
// the earlier question and the follow-up together: a follow-up of a few
// words alone says little about its language.
Result<std::string> Accept(std::string_view reply, const std::string& earlier, std::string_view question) {
  std::string rewritten = CleanTranslation(reply);
  if (rewritten.empty()) return Status::Internal("the follow-up rewrite came back empty");
  const std::string asked = earlier + " " + std::string(question);
  if (std::string_view(DetectQuestionLanguage(rewritten).code) != DetectQuestionLanguage(asked).code)
    return Status::Internal("the follow-up rewrite came back in another language");
  if (!KeepsNames(question, rewritten))
    return Status::Internal("the follow-up rewrite lost a name or number of the question");
  if (!KeepsWords(question, rewritten))
    return Status::Internal("the follow-up rewrite lost most words of the question");
  return rewritten;
}

}  // namespace

const inference::ChatMessage* LastUserTurn(const std::vector<inference::ChatMessage>& history) {
  for (auto it = history.rbegin(); it != history.rend(); ++it)
    if (it->role == "user") return &*it;
  return nullptr;
}

bool MayFollowUp(const std::vector<inference::ChatMessage>& history, std::string_view question,
                 size_t max_words) {
  return CountWords(question) <= max_words && LastUserTurn(history) != nullptr;
}

bool RewritesFollowUps(const inference::Engine& engine) {
  constexpr int64_t kLeastParameters = 1'000'000'000;
  return engine.instruction_tuned() && engine.info().parameters >= kLeastParameters;
}

Result<inference::GenerationRequest> RewriteRequest(const inference::Engine& engine,
                                                    const std::vector<inference::ChatMessage>& history,
                                                    std::string_view question) {
  if (engine.chat_template() == inference::ChatTemplate::kNone)
    return Status::Unsupported("a base model does not rewrite questions on request");
  const inference::ChatMessage* earlier = LastUserTurn(history);
  if (earlier == nullptr) return Status::InvalidArgument("a follow-up needs an earlier question");
  // Only the earlier question: shown the earlier answer too, the 0.5B
  // mostly copied it.
  auto ids =
      engine.FormatChat({{"user", std::string(kAsk) + "Earlier question: " + OneLine(earlier->content) +
                                      "\nFollow-up question: " + OneLine(question)}});
  if (!ids.ok()) return ids.status();
  return OneLineRequest(std::move(ids).value(), kMaxTokens);
}

Rewriter RewriteWith(const inference::Engine& engine, inference::Generator& generator,
                     std::chrono::milliseconds timeout, uint64_t cache_scope) {
  return [&engine, &generator, timeout, cache_scope](const std::vector<inference::ChatMessage>& history,
                                                     std::string_view question) -> Result<std::string> {
    auto request = RewriteRequest(engine, history, question);
    if (!request.ok()) return request.status();
    request->cache_scope = cache_scope;
    auto reply = RunShortGeneration(generator, *request, timeout, "the follow-up rewrite");
    if (!reply.ok()) return reply.status();
    return Accept(reply->text, LastUserTurn(history)->content, question);
  };
}

}  // namespace ragd::app
