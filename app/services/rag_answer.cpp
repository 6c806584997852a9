#include "app/services/rag_answer.h"

#include <algorithm>
#include <cctype>
#include <chrono>

namespace ragd::app {
namespace {

// Words that only a follow-up this short leaves for retrieval to work with.
constexpr size_t kFollowUpMaxWords = 6;

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

bool NothingRelevant(const std::vector<retrieval::SearchHit>& hits, const RagQuestion& q) {
  if (hits.empty()) return true;
  float dense = 0;
  double lexical = 0;
  for (const retrieval::SearchHit& h : hits) {
    if (h.dense_rank > 0) dense = std::max(dense, h.dense_score);
    if (h.lexical_rank > 0) lexical = std::max(lexical, h.lexical_score);
  }
  return dense < q.abstain_dense_below && lexical < q.abstain_lexical_below;
}

// Lower-cased ASCII words of s (other bytes kept as they are).
std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80 || c == '\'') {
      w += static_cast<char>(std::tolower(u));
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

}  // namespace

std::string SearchQuery(const RagQuestion& q) {
  if (CountWords(q.question) > kFollowUpMaxWords) return q.question;
  for (auto it = q.history.rbegin(); it != q.history.rend(); ++it) {
    if (it->role == "user") return it->content + "\n" + q.question;
  }
  return q.question;
}

std::string AbstentionText(const std::string& question) {
  struct Language {
    const char* answer;
    std::vector<std::string_view> words;  // frequent short words of questions
    std::vector<std::string_view> marks;  // letters (UTF-8) found mostly in this language
  };
  static const Language kLanguages[] = {
      {"The documents do not say.",
       {"the", "what", "how", "which", "is", "do", "does", "can", "i", "of", "to", "and", "in", "why",
        "when"},
       {}},
      {"Os documentos não dizem.",
       {"o", "a", "os", "as", "que", "qual", "como", "é", "do", "da", "no", "na", "um", "uma", "posso", "não",
        "para", "em", "quando"},
       {"ã", "õ", "ç"}},
      {"Les documents ne le disent pas.",
       {"le", "la", "les", "quel", "quelle", "comment", "est", "des", "du", "un", "une", "je", "puis", "pour",
        "que", "qu'est", "pourquoi", "dans"},
       {"è", "ê", "à", "ù", "œ"}},
      {"Los documentos no lo dicen.",
       {"el", "la", "los", "las", "qué", "cuál", "cómo", "es", "del", "un", "una", "puedo", "para", "en",
        "por", "que"},
       {"ñ", "¿", "¡"}},
      {"Die Dokumente sagen dazu nichts.",
       {"der", "die", "das", "wie", "was", "welche", "welcher", "ist", "ich", "und", "kann", "den", "ein",
        "eine", "mit", "warum", "wann", "nicht"},
       {"ß", "ä", "ö", "ü"}},
  };
  const std::vector<std::string> words = Words(question);
  const Language* best = &kLanguages[0];
  int best_score = 0;
  for (const Language& lang : kLanguages) {
    int score = 0;
    for (const std::string& w : words)
      for (std::string_view known : lang.words) score += w == known ? 2 : 0;
    for (std::string_view mark : lang.marks) score += question.find(mark) != std::string::npos ? 3 : 0;
    if (score > best_score) {
      best_score = score;
      best = &lang;
    }
  }
  return best->answer;
}

inference::SamplingOptions RagAnswerSampling() {
  inference::SamplingOptions s;
  s.temperature = 0;
  s.repeat_penalty = 1.1f;
  return s;
}

Result<RagAnswerPlan> PlanRagAnswer(const retrieval::Retriever& retriever, const inference::Engine& engine,
                                    const RagQuestion& q, inference::GenerationRequest request,
                                    Metrics* metrics) {
  const auto t0 = std::chrono::steady_clock::now();
  retrieval::SearchOptions opts;
  opts.top_k = q.top_k;
  RagAnswerPlan plan;
  plan.search_query = SearchQuery(q);
  auto hits = retriever.Search(plan.search_query, opts);
  if (!hits.ok()) return hits.status();
  plan.retrieval_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (metrics != nullptr) metrics->ObserveRetrieval(plan.retrieval_ms / 1000.0);
  if (NothingRelevant(*hits, q)) {
    plan.abstention = AbstentionText(q.question);
    return plan;
  }
  plan.sources = NumberSources(std::move(hits).value());

  if (engine.chat_template() != inference::ChatTemplate::kNone) {
    auto ids = engine.FormatChat(BuildRagConversation(q.question, plan.sources, q.history));
    if (!ids.ok()) return ids.status();
    request.prompt = std::move(ids).value();
  } else {
    auto ids = engine.PlainPrompt(BuildRagPrompt(q.question, plan.sources, q.history));
    if (!ids.ok()) return ids.status();
    request.prompt = std::move(ids).value();
    for (const std::string& s : RagStopStrings()) request.stop.push_back(s);
  }
  plan.request = std::move(request);
  return plan;
}

}  // namespace ragd::app
