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
  // The embedding model (MiniLM) is English-only: for other languages its low
  // cosines and the missing word overlap with the English corpus say little
  // ("Wie sichere ich den Datenordner?" scored under the cut-off while the
  // guide answers it), so only English questions are turned away here.
  if (std::string_view(DetectQuestionLanguage(q.question).name) != "English") return false;
  float dense = 0;
  double lexical = 0;
  for (const retrieval::SearchHit& h : hits) {
    if (h.dense_rank > 0) dense = std::max(dense, h.dense_score);
    if (h.lexical_rank > 0) lexical = std::max(lexical, h.lexical_score);
  }
  return dense < q.abstain_dense_below && lexical < q.abstain_lexical_below;
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
  return DetectQuestionLanguage(question).abstention;
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
