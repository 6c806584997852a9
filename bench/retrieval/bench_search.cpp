// Hybrid search latency (dense vector index + FTS5 BM25 + reciprocal rank
// fusion + fetching the chunks) over synthetic corpora: random unit vectors
// and Zipf-distributed synthetic words, 150 words a chunk (about the 200 word
// pieces the chunker aims at); queries of 6 words drawn from the same
// distribution. Prints p50/p95 per corpus size, the dense-only and
// lexical-only parts, and the query-embedding time.
// Run by hand:  bench_search [SIZES...]   (default: 10000 100000)
//   RAGD_BENCH_INDEX=hnsw selects the HNSW index; RAGD_BENCH_WORDS=N sets the
//   words per chunk (default 150); RAGD_MODELS as for tests.
//   RAGD_BENCH_POSTGRES=URL puts the corpus in that PostgreSQL database (give
//   one empty schema per size, e.g. options='-c search_path=b10000', and one size per run).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_paths.h"
#include "retrieval/blas_core.h"
#include "retrieval/retriever.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kDim = 384;
constexpr int kChunksPerDoc = 100;
constexpr int kDefaultWordsPerChunk = 150;  // ~200 word pieces, the chunker's default target
constexpr int kVocabulary = 30000;

double Ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of the process (all threads: the hybrid search runs its lexical
// half on a second thread) in ms: on a loaded machine it shows what the query
// costs apart from waiting for a core.
double ProcessCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "?" : one;
}

// Word of Zipf rank `rank`: the most frequent ranks are English function
// words, as in real text (the lexical search drops them from queries).
std::string Word(int rank) {
  static const char* kTop[] = {"the",   "of",   "and",   "to",    "a",    "in",    "is",   "it",
                               "that",  "for",  "was",   "on",    "are",  "as",    "with", "they",
                               "at",    "be",   "this",  "from",  "have", "or",    "by",   "an",
                               "which", "but",  "what",  "were",  "when", "there", "can",  "their",
                               "if",    "will", "would", "about", "how",  "into",  "than", "them"};
  if (rank < static_cast<int>(std::size(kTop))) return kTop[rank];
  std::string w = "w";
  for (int r = rank;; r /= 26) {
    w += static_cast<char>('a' + r % 26);
    if (r < 26) break;
  }
  return w;
}

class Zipf {
 public:
  explicit Zipf(int n) : cdf_(static_cast<size_t>(n)) {
    double sum = 0;
    for (int i = 0; i < n; ++i) cdf_[static_cast<size_t>(i)] = sum += 1.0 / (i + 1);
    for (double& c : cdf_) c /= sum;
  }
  int operator()(std::mt19937& rng) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return static_cast<int>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }

 private:
  std::vector<double> cdf_;
};

std::vector<float> UnitVector(std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(kDim);
  float norm = 0;
  for (float& f : v) {
    f = normal(rng);
    norm += f * f;
  }
  for (float& f : v) f /= std::sqrt(norm);
  return v;
}

struct Percentiles {
  double p50, p95;
};
Percentiles Of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 95 / 100)]};
}

}  // namespace

int main(int argc, char** argv) {
  ragd::retrieval::RestartWithBetterBlasCore(argv);  // the kernels the server gets
  std::setvbuf(stdout, nullptr, _IOLBF, 0);          // progress shows when redirected
  using namespace ragd;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const int n = std::atoi(argv[i]);
    if (n <= 0) {
      std::fprintf(
          stderr,
          "usage: bench_search [CHUNKS...]   (default 10000 100000; RAGD_BENCH_INDEX=hnsw for HNSW)\n");
      return 2;
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) sizes = {10000, 100000};
  const char* kind = std::getenv("RAGD_BENCH_INDEX");
  const char* words_env = std::getenv("RAGD_BENCH_WORDS");
  const int words_per_chunk =
      words_env != nullptr && std::atoi(words_env) > 0 ? std::atoi(words_env) : kDefaultWordsPerChunk;
  const std::string model_dir = ragd::bench::MiniLmDir();
  auto embedder = retrieval::Embedder::Load(model_dir);
  if (!embedder.ok()) {
    std::fprintf(stderr, "bench_search: %s\n", embedder.status().ToString().c_str());
    return 1;
  }
  std::shared_ptr<const retrieval::Embedder> model(std::move(*embedder));
  std::printf("machine: %u cores; index %s; chunks of %d synthetic words, %d-dim random unit vectors\n",
              std::thread::hardware_concurrency(), kind != nullptr ? kind : "flat", words_per_chunk, kDim);

  std::vector<double> embed_ms;
  for (int i = 0; i < 50; ++i) {
    auto t0 = Clock::now();
    (void)model->EmbedOne("how do I configure the retrieval index for a large corpus " + std::to_string(i));
    embed_ms.push_back(Ms(t0));
  }
  const auto e = Of(embed_ms);
  std::printf("query embedding (12 words): p50 %.2f ms, p95 %.2f ms\n", e.p50, e.p95);

  Zipf zipf(kVocabulary);
  for (int n : sizes) {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("ragd-bench-search-" + std::to_string(n))).string();
    std::filesystem::remove_all(dir);
    retrieval::RetrieverOptions o;
    o.data_dir = dir;
    o.synchronous_full = false;
    if (kind != nullptr) o.index.kind = kind;
    if (const char* pg = std::getenv("RAGD_BENCH_POSTGRES"); pg != nullptr) o.postgres_url = pg;
    auto r = retrieval::Retriever::Open(o, model);
    if (!r.ok()) {
      std::fprintf(stderr, "bench_search: %s\n", r.status().ToString().c_str());
      return 1;
    }
    // Fill the store and index directly with synthetic chunks (no embedding).
    std::mt19937 rng(42);
    auto t_fill = Clock::now();
    for (int doc = 0; doc * kChunksPerDoc < n; ++doc) {
      corpus::NewDocument d;
      d.title = "synthetic " + std::to_string(doc);
      d.source_name = d.title + ".txt";
      d.media_type = "text/plain";
      d.sha256 = std::string(64, '0');
      const std::string num = std::to_string(doc);
      d.sha256.replace(64 - num.size(), num.size(), num);
      for (int c = 0; c < kChunksPerDoc && doc * kChunksPerDoc + c < n; ++c) {
        corpus::NewChunk chunk;
        chunk.start = static_cast<int64_t>(d.text.size());
        for (int w = 0; w < words_per_chunk; ++w) chunk.text += (w ? " " : "") + Word(zipf(rng));
        d.text += chunk.text + "\n\n";
        chunk.end = chunk.start + static_cast<int64_t>(chunk.text.size());
        chunk.token_count = words_per_chunk * 2;
        chunk.embedding = UnitVector(rng);
        d.chunks.push_back(std::move(chunk));
      }
      d.byte_size = static_cast<int64_t>(d.text.size());
      auto added = (*r)->store().AddDocument(d);
      if (!added.ok()) {
        std::fprintf(stderr, "bench_search: %s\n", added.status().ToString().c_str());
        return 1;
      }
    }
    r->reset();  // reopen: the index is rebuilt from the stored embeddings
    retrieval::OpenReport report;
    auto t_open = Clock::now();
    r = retrieval::Retriever::Open(o, model, &report);
    if (!r.ok()) return 1;
    std::printf(
        "\n%d chunks: store filled in %.1f s; index rebuilt from the store in %.2f s (%lld vectors)\n", n,
        Ms(t_fill) / 1000 - report.seconds, Ms(t_open) / 1000, static_cast<long long>(report.vectors));

    std::vector<double> hybrid, hybrid_cpu, dense, lexical, index_only, fetch;
    for (int q = 0; q < 300; ++q) {
      std::string query;
      for (int w = 0; w < 6; ++w) query += (w ? " " : "") + Word(zipf(rng));
      const auto vec = UnitVector(rng);
      retrieval::SearchOptions so;
      so.top_k = 5;
      const double cpu0 = ProcessCpuMs();
      auto t0 = Clock::now();
      auto hits = (*r)->searcher().SearchWithVector(query, vec, so);
      hybrid.push_back(Ms(t0));
      hybrid_cpu.push_back(ProcessCpuMs() - cpu0);
      if (!hits.ok() || hits->empty()) {
        std::fprintf(stderr, "bench_search: no result for %s\n", query.c_str());
        return 1;
      }
      so.lexical = false;
      t0 = Clock::now();
      (void)(*r)->searcher().SearchWithVector(query, vec, so);
      dense.push_back(Ms(t0));
      so.lexical = true;
      so.dense = false;
      t0 = Clock::now();
      (void)(*r)->searcher().SearchWithVector(query, vec, so);
      lexical.push_back(Ms(t0));
      t0 = Clock::now();
      auto raw = (*r)->index().Search(vec, 20);
      index_only.push_back(Ms(t0));
      std::vector<corpus::ChunkId> ids;
      for (const auto& hit : *raw) ids.push_back(hit.id);
      ids.resize(7);
      t0 = Clock::now();
      (void)(*r)->store().GetChunks(ids);
      fetch.push_back(Ms(t0));
    }
    const auto io = Of(index_only), f = Of(fetch);
    std::printf(
        "%d chunks: vector index search alone p50 %.2f / p95 %.2f ms; fetching 7 chunks p50 %.2f / p95 %.2f "
        "ms\n",
        n, io.p50, io.p95, f.p50, f.p95);
    const auto h = Of(hybrid), hc = Of(hybrid_cpu), d = Of(dense), l = Of(lexical);
    std::printf(
        "%d chunks: hybrid p50 %.2f ms, p95 %.2f ms (CPU of both threads p50 %.2f / p95 %.2f ms) | dense "
        "only "
        "p50 %.2f / p95 %.2f ms | lexical only p50 %.2f / p95 %.2f ms (top_k 5, 20 candidates each, 300 "
        "queries of 6 words; load average %s)\n",
        n, h.p50, h.p95, hc.p50, hc.p95, d.p50, d.p95, l.p50, l.p95, LoadAverage().c_str());
    r->reset();
    std::filesystem::remove_all(dir);
  }
  return 0;
}
