#include "app/services/model_bootstrap.h"

#include <cstdio>
#include <filesystem>

#include "app/config/module_options.h"

namespace ragd::app {
namespace {

Status Failed(const Status& st, const char* what) {
  return Status(st.code(), std::string(what) + st.message());
}

}  // namespace

std::string LlmId(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.ends_with(".gguf")) name.resize(name.size() - 5);
  return name;
}

Result<Models> LoadModels(const Config& config, const ModelLoadOptions& options) {
  Models m;
  if (options.language_model) {
    for (const std::string& path : config.LlmPaths()) {
      LoadedLlm llm{.id = LlmId(path)};
      for (const LoadedLlm& other : m.llms) {
        if (other.id == llm.id) return Status::InvalidArgument("models.llm names model " + llm.id + " twice");
      }
      auto engine = inference::Engine::Load(EngineOptionsFor(config, path, llm.id));
      if (!engine.ok())
        return Failed(engine.status(), ("cannot load the language model " + llm.id + ": ").c_str());
      llm.engine = std::move(engine).value();
      m.llms.push_back(std::move(llm));
    }
  }

  retrieval::EmbedderOptions eopts;
  if (options.share_engine_threads && !m.llms.empty()) eopts.threads = m.llms.front().engine->threads();
  auto embedder = retrieval::Embedder::Load(config.EmbeddingPath(), eopts);
  if (!embedder.ok()) return Failed(embedder.status(), "cannot load the embedding model: ");
  m.embedder = std::move(embedder).value();
  m.embedding_id = std::filesystem::path(config.EmbeddingPath()).filename().string();

  retrieval::RetrieverOptions ropts = RetrieverOptionsFor(config);
  // Bulk ingestion commits without fsync per document: a crash loses at most
  // the last documents, and running the command again adds them.
  if (options.bulk_ingest) ropts.synchronous_full = false;
  auto retriever = retrieval::Retriever::Open(ropts, m.embedder, &m.index_report);
  if (!retriever.ok()) return Failed(retriever.status(), "cannot open the corpus: ");
  m.retriever = std::move(retriever).value();
  return m;
}

std::string IndexRepairNote(const retrieval::OpenReport& r) {
  char buf[160];
  if (r.rebuilt && r.vectors > 0) {
    std::snprintf(buf, sizeof buf, "vector index rebuilt from the database (%lld vectors, %.1f s): ",
                  static_cast<long long>(r.vectors), r.seconds);
  } else if (r.repaired) {
    std::snprintf(buf, sizeof buf,
                  "vector index repaired (%lld added, %lld removed): ", static_cast<long long>(r.added),
                  static_cast<long long>(r.removed));
  } else {
    return "";
  }
  return buf + r.reason;
}

}  // namespace ragd::app
