// Embedding throughput of the BERT encoder (chunks/s, tokens/s, GFLOP/s) at 1
// and 2 OpenBLAS threads, next to plain OpenBLAS sgemm GFLOP/s on the model's
// own matrix shapes. The encoder splits a batch over OpenBLAS's thread count
// (retrieval/bert.h), so "threads N" is openblas_set_num_threads(N) for both.
// Run by hand:
//   bench_embedding [MODEL_DIR] [CHUNKS] [TOKENS_PER_CHUNK]
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_paths.h"
#include "retrieval/blas_core.h"
#include "retrieval/embedder.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// GFLOP/s of Y[m,n] = X[m,k] * W[n,k]^T, best of a few runs.
double SgemmGflops(int m, int n, int k) {
  std::vector<float> x(static_cast<size_t>(m) * k, 0.5f), w(static_cast<size_t>(n) * k, 0.25f),
      y(static_cast<size_t>(m) * n);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.f, x.data(), k, w.data(), k, 0.f,
                y.data(), n);
    best = std::max(best, 2.0 * m * n * k / Seconds(t0) / 1e9);
  }
  return best;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "?" : one;
}

std::string ModelDir(int argc, char** argv) {
  if (argc > 1) return argv[1];
  return ragd::bench::MiniLmDir();
}

// Synthetic English-like chunks of about `tokens` word pieces.
std::vector<std::string> Chunks(const ragd::retrieval::Embedder& e, int n, int tokens) {
  static const char* kWords[] = {"the",       "server",  "retrieves", "passages",  "from",  "a",
                                 "corpus",    "of",      "uploaded",  "documents", "and",   "answers",
                                 "questions", "with",    "numbered",  "citations", "while", "counting",
                                 "tokens",    "against", "quotas"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(kWords)) - 1);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string s;
    while (e.CountTokens(s) < static_cast<size_t>(tokens)) {
      s += kWords[pick(rng)];
      s += ' ';
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ragd::retrieval::RestartWithBetterBlasCore(argv);  // the kernels the server gets
  std::setvbuf(stdout, nullptr, _IOLBF, 0);          // progress shows when redirected
  const std::string dir = ModelDir(argc, argv);
  const int n_chunks = argc > 2 ? std::atoi(argv[2]) : 64;
  const int tokens = argc > 3 ? std::atoi(argv[3]) : 200;
  auto embedder = ragd::retrieval::Embedder::Load(dir);
  if (!embedder.ok()) {
    std::fprintf(stderr, "bench_embedding: %s\n", embedder.status().ToString().c_str());
    return 1;
  }
  const auto& e = **embedder;
  auto chunks = Chunks(e, n_chunks, tokens);
  std::printf("machine: %u cores (hardware_concurrency); OpenBLAS: %s\n", std::thread::hardware_concurrency(),
              openblas_get_config());
  std::printf("model: %s, dim %d; %d chunks of ~%d word pieces (+[CLS]/[SEP])\n", e.name().c_str(),
              e.dimension(), n_chunks, tokens);
  const int batch_tokens = 32 * (tokens + 2);
  for (int threads : {1, 2}) {
    openblas_set_num_threads(threads);
    // The sgemm reference is taken right before and right after the encoder
    // run and averaged, so that load from other processes drifting during the
    // run skews both sides alike.
    const double g_up = SgemmGflops(batch_tokens, 1536, 384);
    const double g_down = SgemmGflops(batch_tokens, 384, 1536);
    const double g_sq = SgemmGflops(1024, 1024, 1024);
    (void)e.Embed({chunks[0]});  // warm up
    ragd::retrieval::EmbedStats stats;
    auto t0 = Clock::now();
    auto out = e.Embed(chunks, &stats);
    const double s = Seconds(t0);
    if (!out.ok()) return 1;
    const double g_up2 = SgemmGflops(batch_tokens, 1536, 384);
    const double g_down2 = SgemmGflops(batch_tokens, 384, 1536);
    const double gflops = stats.flops / s / 1e9;
    const double sgemm_ref = (g_up + g_down + g_up2 + g_down2) / 4;
    std::printf(
        "threads %d: sgemm %.1f GFLOP/s (%dx1536x384), %.1f (%dx384x1536), %.1f (1024^3); after the run "
        "%.1f, %.1f\n",
        threads, g_up, batch_tokens, g_down, batch_tokens, g_sq, g_up2, g_down2);
    std::printf(
        "threads %d: embedding %.1f chunks/s, %.0f tokens/s, %.1f GFLOP/s = %.0f%% of sgemm on the model "
        "shapes (%.1f GFLOP/s; run %.2f s; load average %s)\n",
        threads, n_chunks / s, stats.tokens / s, gflops, 100.0 * gflops / sgemm_ref, sgemm_ref, s,
        LoadAverage().c_str());
  }
  return 0;
}
