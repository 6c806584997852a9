// Which language model answers a request. An OpenAI-shaped request names a
// model: one of the loaded LLMs by id, or a RAG pseudo-model:
//   "ragd-rag"       answers from the corpus with the answer (quality) model,
//                    the first of models.llm; when that model already has
//                    rag.fallback_waiting requests waiting for a slot, the fast
//                    model answers instead, so the first token is not held up
//                    behind them (the cheapest model that meets the bar); so
//                    it does while the answer model is an upstream pool none
//                    of whose endpoints is reachable;
//   "ragd-rag-fast"  answers from the corpus with the fast model
//                    (rag.fast_model, else the second of models.llm).
// /v1/ask is "ragd-rag".
//
// Local models and upstream pools are chosen alike: through their
// Generator's waiting() and Health() (inference/generator.h).
//
// Thread-safety: reads the context's models and their generators' gauges;
// any request thread once the models are loaded.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/services/app_context.h"
#include "common/status.h"

namespace ragd::app {

inline constexpr const char* kRagFastModelId = "ragd-rag-fast";

struct ModelChoice {
  LanguageModel* llm = nullptr;  // generates the answer
  bool rag = false;              // answer from the corpus, with citations
  std::string requested;         // the name the client used (echoed as "model")
};

// The model for a request naming `name` (none: the first LLM, no RAG).
// kNotFound for a name that is neither an LLM nor a RAG model.
Result<ModelChoice> ChooseModel(AppContext& ctx, const std::optional<std::string>& name);

// The fast model: rag.fast_model, else the second LLM, else the first.
LanguageModel& FastLlm(AppContext& ctx);
// The same choice among the ids of models.llm (in order, at least one):
// the index of the fast model. For commands that load models themselves.
size_t FastLlmIndex(const std::vector<std::string>& ids, std::string_view fast_model);

}  // namespace ragd::app
