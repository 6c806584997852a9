// Retrieval for the RAG routes (/v1/ask and model "ragd-rag").
#pragma once

#include <string>
#include <vector>

#include "app/services/app_context.h"
#include "app/services/generation_runner.h"
#include "app/services/rag_prompt.h"

namespace ragd::app {

struct Retrieved {
  std::vector<Source> sources;
  double ms = 0;
};

// Hybrid search for `question`, numbered as citations; records its latency.
Result<Retrieved> RetrieveSources(AppContext& ctx, const std::string& question, int top_k);

// Fills plan.request.prompt (BOS + the RAG prompt, see rag_prompt.h) and adds
// the RAG stop strings to the caller's.
Status PrepareRagRequest(AppContext& ctx, const std::string& question,
                         const std::vector<inference::ChatMessage>& history, GenerationPlan* plan);

}  // namespace ragd::app
