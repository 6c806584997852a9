// bench_batch: what one batched forward pass costs as the batch grows, the
// figures behind the scheduler's choices (how many sequences to decode
// together, how many draft tokens a step can afford).
//
//   bench_batch [--model PATH] [--threads 2] [--context 600] [--steps 24]
//               [--batches 1,2,4,8,16] [--drafts 0,2,4,8 or none: decode only]
//
// Decode: B sequences, each with --context positions already in its cache,
// one new token each per step: ms per step and aggregate tok/s for B = 1, 2,
// 4, 8, 16. Verification: one sequence fed 1 + k tokens per step (k draft
// tokens), all logits: ms per step for k = 0, 2, 4, 8. Sampling: what the
// scheduler spends per sequence and step choosing a token from real logits,
// with the default sampling options and greedy.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_paths.h"
#include "inference/gguf.h"
#include "inference/kernels/kernels.h"
#include "inference/models/model.h"
#include "inference/tokenizer/sampler.h"

using namespace ragd::inference;
using ragd::Status;

namespace {

struct Seq {
  std::unique_ptr<KvCache> cache;
  std::vector<int32_t> tokens;
  std::vector<float> logits;
  std::span<const float> view;  // the step's logits where the model keeps them, as the scheduler reads them
};

// Mean ms of one step feeding `per_seq` tokens to each of `seqs`.
double StepMs(Model& model, ThreadPool& pool, std::vector<Seq>& seqs, int per_seq, int steps,
              int64_t context) {
  std::vector<SequenceStep> batch(seqs.size());
  double total = 0;
  for (int s = 0; s < steps + 1; ++s) {
    for (size_t i = 0; i < seqs.size(); ++i) {
      seqs[i].cache->Rewind(context);  // every step sees the same history length
      batch[i].cache = seqs[i].cache.get();
      batch[i].tokens = std::span<const int32_t>(seqs[i].tokens.data(), per_seq);
      batch[i].all_logits = per_seq > 1;
      batch[i].logits_view = &seqs[i].view;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (Status st = model.Forward(batch, &pool); !st.ok()) {
      std::fprintf(stderr, "bench_batch: %s\n", st.ToString().c_str());
      std::exit(1);
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) total += ms;  // the first step warms caches and threads
  }
  return total / steps;
}

std::vector<Seq> MakeSeqs(Model& model, ThreadPool& pool, int n, int64_t context) {
  std::vector<Seq> seqs(n);
  for (int i = 0; i < n; ++i) {
    seqs[i].cache = model.NewCache(context + 16, 16);
    seqs[i].tokens.resize(context);
    for (int64_t p = 0; p < context; ++p)
      seqs[i].tokens[p] = static_cast<int32_t>(1000 + (p * 37 + i * 11) % 5000);
    SequenceStep st;
    st.cache = seqs[i].cache.get();
    st.tokens = seqs[i].tokens;
    st.logits = &seqs[i].logits;
    if (Status s = model.Forward(std::span<SequenceStep>(&st, 1), &pool); !s.ok()) std::exit(1);
  }
  return seqs;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = ragd::bench::GemmaModelPath();
  int threads = 2, steps = 24;
  int64_t context = 600;
  std::vector<int> batches = {1, 2, 4, 8, 16}, drafts = {0, 2, 4, 8};
  auto parse_list = [](const std::string& text, std::vector<int>* out) {
    out->clear();
    if (text == "none") return true;  // skip that part
    for (size_t pos = 0; pos <= text.size();) {
      const size_t comma = std::min(text.find(',', pos), text.size());
      const int v = std::atoi(text.substr(pos, comma - pos).c_str());
      if (v < 0) return false;
      out->push_back(v);
      pos = comma + 1;
    }
    return !out->empty();
  };
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 == argc) {
      std::fprintf(stderr, "bench_batch: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--model")
      path = argv[i + 1];
    else if (a == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (a == "--context")
      context = std::atoll(argv[i + 1]);
    else if (a == "--steps")
      steps = std::atoi(argv[i + 1]);
    else if (a == "--batches" || a == "--drafts") {
      if (!parse_list(argv[i + 1], a == "--batches" ? &batches : &drafts)) {
        std::fprintf(stderr, "bench_batch: %s takes a list of counts, e.g. 1,2,4, or none\n", a.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "bench_batch: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (threads < 1 || steps < 1 || context < 1) {
    std::fprintf(stderr, "bench_batch: --threads, --steps and --context must be >= 1\n");
    return 2;
  }
  auto file = GgufFile::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "bench_batch: %s\n", file.status().ToString().c_str());
    return 1;
  }
  auto model = LoadModel(*file);
  if (!model.ok()) {
    std::fprintf(stderr, "bench_batch: %s\n", model.status().ToString().c_str());
    return 1;
  }
  ThreadPool pool(threads);
  std::printf("model %s, %u cores, %d threads, kernels %s, %lld positions of context per sequence\n",
              path.c_str(), std::thread::hardware_concurrency(), threads, KernelIsaName().c_str(),
              static_cast<long long>(context));
  std::printf("batched decode: sequences | ms per step | aggregate tok/s | vs the first\n");
  double base = 0;
  for (int b : batches) {
    if (b < 1) continue;
    auto seqs = MakeSeqs(**model, pool, b, context);
    const double ms = StepMs(**model, pool, seqs, 1, steps, context);
    const double tps = b * 1000.0 / ms;
    if (base == 0) base = tps;
    std::printf("  %2d | %7.2f ms | %7.1f tok/s | %5.2fx\n", b, ms, tps, tps / base);
  }
  if (drafts.empty()) return 0;
  std::printf("draft verification, 1 sequence: draft tokens | ms per step | vs the first\n");
  auto one = MakeSeqs(**model, pool, 1, context);
  double plain = 0;
  for (int k : drafts) {
    const double ms = StepMs(**model, pool, one, 1 + k, steps, context);
    if (plain == 0) plain = ms;
    std::printf("  %2d | %7.2f ms | %5.2fx\n", k, ms, ms / plain);
  }
  // The last position's logits of the one sequence.
  const auto n_vocab = static_cast<size_t>((**model).config().n_vocab);
  const std::span<const float> logits(one[0].logits.data() + one[0].logits.size() - n_vocab, n_vocab);
  std::printf("sampling one token from %zu logits, per sequence and step:\n", n_vocab);
  for (float temperature : {SamplingOptions().temperature, 0.0f}) {
    SamplingOptions o;
    o.temperature = temperature;
    o.seed = 1;
    auto sampler = Sampler::Create(o, static_cast<int>(n_vocab));
    if (!sampler.ok()) return 1;
    constexpr int kDraws = 200;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kDraws; ++i) sampler->Sample(logits, {});
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / kDraws;
    std::printf("  temperature %.1f (top-k %d, top-p %.2f, min-p %.2f) | %6.3f ms\n", temperature, o.top_k,
                o.top_p, o.min_p, ms);
  }
  return 0;
}
