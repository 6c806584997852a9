// `ragd ingest PATH...`: adds files and folders (recursively) to the corpus in
// <data>/corpus.db and <data>/vectors.faiss.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "app/cli/commands.h"
#include "app/config/config_flags.h"
#include "app/services/model_bootstrap.h"

namespace ragd::app {
namespace {

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted = true; }

struct Input {
  std::string path;
  uint64_t bytes = 0;
  bool from_folder = false;  // unsupported formats found in folders are skipped quietly
};

std::string Duration(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
  }
  return buf;
}

}  // namespace

int RunIngest(const std::vector<std::string>& args) {
  Flags flags("ragd ingest [--data DIR] [--config FILE] [--set key=value]... PATH...",
              "Adds documents (txt, md, html, pdf; folders recursively) to the corpus in the data folder.\n"
              "Documents already present (same bytes) are reported and skipped.");
  AddConfigFlags(flags);
  flags.Bool("--quiet", "-q", "print only errors and the summary");
  if (auto code = ParseOrExit(flags, args)) return *code;
  if (flags.positional().empty()) {
    std::fprintf(stderr, "ragd ingest: give at least one file or folder\n%s", flags.HelpText().c_str());
    return 2;
  }
  auto config = ConfigFromFlags(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "ragd ingest: %s\n", config.status().message().c_str());
    return 2;
  }

  // Collect the inputs first, for the progress line's totals.
  std::vector<Input> inputs;
  for (const std::string& p : flags.positional()) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<Input> found;
      for (auto it = std::filesystem::recursive_directory_iterator(
               p, std::filesystem::directory_options::skip_permission_denied, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->path().filename().string().starts_with(".")) {
          if (it->is_directory()) it.disable_recursion_pending();
          continue;
        }
        if (it->is_regular_file()) found.push_back({it->path().string(), it->file_size(), true});
      }
      std::sort(found.begin(), found.end(), [](const Input& a, const Input& b) { return a.path < b.path; });
      inputs.insert(inputs.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(p, ec)) {
      inputs.push_back({p, std::filesystem::file_size(p, ec), false});
    } else {
      std::fprintf(stderr, "ragd ingest: %s: no such file or folder\n", p.c_str());
      return 2;
    }
  }

  ModelLoadOptions load;
  load.language_model = false;
  load.bulk_ingest = true;
  auto models = LoadModels(*config, load);
  if (!models.ok()) {
    std::fprintf(stderr, "ragd ingest: %s\n", models.status().ToString().c_str());
    return 1;
  }
  retrieval::Retriever& retriever = *models->retriever;
  if (const std::string note = IndexRepairNote(models->index_report); !note.empty())
    std::fprintf(stderr, "ragd ingest: %s\n", note.c_str());

  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  const bool progress = isatty(STDERR_FILENO) && !flags.Has("--quiet");
  uint64_t total_bytes = 0, done_bytes = 0;
  for (const auto& in : inputs) total_bytes += in.bytes;
  int64_t added = 0, duplicates = 0, skipped = 0, failed = 0, chunks = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < inputs.size() && !g_interrupted; ++i) {
    const Input& in = inputs[i];
    auto res = retriever.IngestFile(in.path, &g_interrupted);
    done_bytes += in.bytes;
    if (progress) std::fprintf(stderr, "\r\033[K");
    if (res.ok()) {
      if (res->inserted) {
        ++added;
        chunks += res->chunk_count;
        if (!progress && !flags.Has("--quiet")) {
          std::printf("added %s: document %lld, %lld chunks\n", in.path.c_str(),
                      static_cast<long long>(res->document_id), static_cast<long long>(res->chunk_count));
        }
      } else {
        ++duplicates;
        if (!flags.Has("--quiet")) {
          std::printf("duplicate %s: same bytes as document %lld (%s)\n", in.path.c_str(),
                      static_cast<long long>(res->document_id), res->title.c_str());
        }
      }
    } else if (res.status().code() == StatusCode::kCancelled) {
      break;
    } else if (in.from_folder && res.status().code() == StatusCode::kUnsupported) {
      ++skipped;
    } else {
      ++failed;
      std::fprintf(stderr, "ragd ingest: %s: %s\n", in.path.c_str(), res.status().message().c_str());
    }
    if (progress) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double rate = s > 0 ? chunks / s : 0;
      const double eta = done_bytes > 0 ? s * static_cast<double>(total_bytes - done_bytes) / done_bytes : 0;
      std::fprintf(stderr, "[%zu/%zu files] %lld chunks, %.1f chunks/s, ETA %s", i + 1, inputs.size(),
                   static_cast<long long>(chunks), rate, Duration(eta).c_str());
      std::fflush(stderr);
    }
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  Status saved = retriever.SaveIndex();
  if (!saved.ok()) std::fprintf(stderr, "ragd ingest: saving the index: %s\n", saved.ToString().c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "%s%lld added (%lld chunks, %.1f chunks/s), %lld duplicates, %lld skipped (unsupported), "
      "%lld failed, in %s; corpus: %lld documents\n",
      g_interrupted ? "interrupted: " : "", static_cast<long long>(added), static_cast<long long>(chunks),
      s > 0 ? chunks / s : 0.0, static_cast<long long>(duplicates), static_cast<long long>(skipped),
      static_cast<long long>(failed), Duration(s).c_str(),
      static_cast<long long>(retriever.store().CountDocuments().ok() ? *retriever.store().CountDocuments()
                                                                     : -1));
  return failed > 0 || g_interrupted || !saved.ok() ? 1 : 0;
}

}  // namespace ragd::app
