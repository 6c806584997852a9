// Retrieval for the RAG routes (/v1/ask and model "ragd-rag").
#pragma once

#include <string>
#include <vector>

#include "app/app_context.h"
#include "app/rag_prompt.h"

namespace ragd::app {

struct Retrieved {
  std::vector<Source> sources;
  double ms = 0;
};

// Hybrid search for `question`, numbered as citations; records its latency.
Result<Retrieved> RetrieveSources(AppContext& ctx, const std::string& question, int top_k);

}  // namespace ragd::app
