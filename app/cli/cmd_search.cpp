// `ragd search "question" [-k N]`: hybrid search over the corpus in the data folder.
#include <cstdio>
#include <string>

#include "app/cli/commands.h"
#include "app/config/config_flags.h"
#include "app/services/model_bootstrap.h"

namespace ragd::app {
namespace {

// The chunk text on one line, cut to about `max_bytes` at a character boundary.
std::string Snippet(const std::string& text, size_t max_bytes) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_bytes && (static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      out += "...";
      break;
    }
    out += (c == '\n' || c == '\t' || c == '\r') ? ' ' : c;
  }
  return out;
}

}  // namespace

int RunSearch(const std::vector<std::string>& args) {
  Flags flags(
      "ragd search [--data DIR] [-k N] [--dense-only|--lexical-only] \"question\"",
      "Prints the corpus chunks that best match the question (dense + BM25, fused by reciprocal rank).");
  AddConfigFlags(flags);
  flags.Value("--top-k", "-k", "chunks to print (default retrieval.top_k)");
  flags.Bool("--dense-only", "", "use only the vector index");
  flags.Bool("--lexical-only", "", "use only BM25");
  if (auto code = ParseOrExit(flags, args)) return *code;
  if (flags.positional().empty()) {
    std::fprintf(stderr, "ragd search: give a question\n%s", flags.HelpText().c_str());
    return 2;
  }
  std::string query;
  for (const auto& p : flags.positional()) query += (query.empty() ? "" : " ") + p;
  auto config = ConfigFromFlags(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "ragd search: %s\n", config.status().message().c_str());
    return 2;
  }
  retrieval::SearchOptions so;
  so.top_k = static_cast<int>(config->retrieval.top_k);
  if (auto k = flags.Get("--top-k")) {
    try {
      so.top_k = std::stoi(*k);
    } catch (...) {
      so.top_k = 0;
    }
    if (so.top_k < 1 || so.top_k > 1000) {
      std::fprintf(stderr, "ragd search: -k must be a number from 1 to 1000\n");
      return 2;
    }
  }
  so.dense = !flags.Has("--lexical-only");
  so.lexical = !flags.Has("--dense-only");

  ModelLoadOptions load;
  load.language_model = false;
  auto models = LoadModels(*config, load);
  if (!models.ok()) {
    std::fprintf(stderr, "ragd search: %s\n", models.status().ToString().c_str());
    return 1;
  }
  retrieval::Retriever& retriever = *models->retriever;
  auto hits = retriever.Search(query, so);
  if (!hits.ok()) {
    std::fprintf(stderr, "ragd search: %s\n", hits.status().message().c_str());
    return hits.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (hits->empty()) {
    std::printf("no matching chunks (the corpus in %s holds %lld documents)\n", config->data_dir.c_str(),
                static_cast<long long>(
                    retriever.store().CountDocuments().ok() ? *retriever.store().CountDocuments() : 0));
    return 0;
  }
  for (size_t i = 0; i < hits->size(); ++i) {
    const auto& h = (*hits)[i];
    std::printf("%zu. %s  (document %lld, chunk %lld)\n   fused %.4f", i + 1, h.title.c_str(),
                static_cast<long long>(h.document_id), static_cast<long long>(h.chunk_id), h.fused_score);
    if (h.dense_rank > 0) std::printf("  dense %.3f (#%d)", h.dense_score, h.dense_rank);
    if (h.lexical_rank > 0) std::printf("  lexical %.2f (#%d)", h.lexical_score, h.lexical_rank);
    std::printf("\n");
    if (!h.heading_context.empty()) std::printf("   [%s]\n", h.heading_context.c_str());
    std::printf("   %s\n\n", Snippet(h.text, 300).c_str());
  }
  return 0;
}

}  // namespace ragd::app
