#include "app/services/rag_answer.h"

#include <chrono>

namespace ragd::app {

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
  auto hits = retriever.Search(q.question, opts);
  if (!hits.ok()) return hits.status();
  RagAnswerPlan plan;
  plan.retrieval_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (metrics != nullptr) metrics->ObserveRetrieval(plan.retrieval_ms / 1000.0);
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
