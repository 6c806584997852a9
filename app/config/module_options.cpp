#include "app/config/module_options.h"

namespace ragd::app {

inference::EngineOptions EngineOptionsFor(const Config& config, const std::string& model_path,
                                          const std::string& id) {
  inference::EngineOptions o;
  o.model_path = model_path;
  for (const std::string& entry : config.models.chat_templates) {
    const size_t eq = entry.find('=');
    if (entry.substr(0, eq) == id) o.chat_template = entry.substr(eq + 1);
  }
  o.threads = static_cast<int>(config.inference.threads);
  o.context_length = static_cast<int>(config.inference.context_length);
  o.nice = static_cast<int>(config.inference.compute_nice);
  return o;
}

inference::SchedulerOptions SchedulerOptionsFor(const Config& config) {
  const InferenceConfig& c = config.inference;
  inference::SchedulerOptions o;
  o.max_running = static_cast<int>(c.max_batch);
  o.max_queue = static_cast<int>(c.max_queue);
  o.step_tokens = static_cast<int>(c.step_tokens);
  o.kv_budget_bytes = static_cast<size_t>(c.kv_cache_bytes);
  o.prefix_cache.max_bytes = static_cast<size_t>(c.prefix_cache_bytes);
  o.speculative = c.speculative;
  o.draft.max_draft = static_cast<int>(c.draft_tokens);
  o.draft.shared_answers = static_cast<int>(c.draft_shared_answers);
  return o;
}

retrieval::RetrieverOptions RetrieverOptionsFor(const Config& config) {
  retrieval::RetrieverOptions o;
  o.data_dir = config.data_dir;
  o.postgres_url = config.storage.postgres_url;  // non-empty: the corpus is shared there too
  o.index.kind = config.retrieval.index;
  o.ingest.chunking.target_tokens = static_cast<int>(config.retrieval.chunk_tokens);
  o.ingest.chunking.overlap_tokens = static_cast<int>(config.retrieval.chunk_overlap);
  o.ingest.extract.max_bytes = static_cast<size_t>(config.retrieval.max_document_bytes);
  // Every caller is the ragd binary, whose hidden `extract-worker` command is the child.
  o.ingest.containment.worker_command = {"/proc/self/exe", "extract-worker"};
  o.ingest.containment.cpu_seconds = static_cast<int>(config.retrieval.extract_cpu_seconds);
  o.ingest.containment.memory_bytes = config.retrieval.extract_memory_bytes;
  o.ingest.containment.wall_seconds = static_cast<double>(config.retrieval.extract_timeout_s);
  o.ingest.containment.max_output_bytes = config.retrieval.max_extracted_bytes;
  return o;
}

}  // namespace ragd::app
