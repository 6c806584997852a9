#include "app/module_options.h"

namespace ragd::app {

inference::EngineOptions EngineOptionsFor(const Config& config) {
  inference::EngineOptions o;
  o.model_path = config.LlmPath();
  o.threads = static_cast<int>(config.inference.threads);
  o.context_length = static_cast<int>(config.inference.context_length);
  return o;
}

retrieval::RetrieverOptions RetrieverOptionsFor(const Config& config) {
  retrieval::RetrieverOptions o;
  o.data_dir = config.data_dir;
  o.index.kind = config.retrieval.index;
  o.ingest.chunking.target_tokens = static_cast<int>(config.retrieval.chunk_tokens);
  o.ingest.chunking.overlap_tokens = static_cast<int>(config.retrieval.chunk_overlap);
  o.ingest.extract.max_bytes = static_cast<size_t>(config.retrieval.max_document_bytes);
  return o;
}

}  // namespace ragd::app
