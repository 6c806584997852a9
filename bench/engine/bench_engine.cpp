// bench_engine: Gemma forward-pass speed on the default model.
//
//   bench_engine [--model PATH] [--threads 1,2] [--prompt 512] [--decode 128] [--chunk 256]
//                [--f32-attention] [--memory]
//
// For each thread count: prefill tok/s of one prompt of --prompt tokens (one
// batched step), decode tok/s over --decode single-token steps (greedy), and
// the process's peak RSS. Prints the core count and the kernel set. The model
// runs with half-precision attention (llama.cpp's arithmetic, bitwise) unless
// --f32-attention is given. --memory adds where the resident memory lies
// (model file, heap in use and free, other anonymous memory, code).
#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_paths.h"
#include "inference/gguf.h"
#include "inference/kernels/kernels.h"
#include "inference/models/model.h"
#include "inference/tokenizer/tokenizer.h"

using namespace ragd::inference;

namespace {

// A field of /proc/self/status in MiB: "VmHWM:" (peak) or "VmRSS:" (now).
double StatusMiB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atof(line.c_str() + std::strlen(field)) / 1024.0;
  }
  return 0;
}

// Resident memory by kind, from /proc/self/smaps: the mapped model file, the
// malloc heap (with what malloc itself counts as in use and as free), other
// anonymous memory (thread arenas, stacks, large blocks: the weights packed at
// load, kernels.h PackWeight, are malloc's mmapped blocks) and the rest (code).
void PrintMemory(const std::string& model_path) {
  std::ifstream in("/proc/self/smaps");
  std::string line, name;
  double file = 0, heap = 0, anon = 0, other = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < 16) {
      // "start-end perms offset dev inode   [path]"
      std::istringstream fields(line);
      std::string skip;
      for (int field = 0; field < 5; ++field) fields >> skip;
      name.clear();
      fields >> std::ws;
      std::getline(fields, name);
      continue;
    }
    if (line.rfind("Rss:", 0) != 0) continue;
    const double mib = std::atof(line.c_str() + 4) / 1024.0;
    if (name == model_path)
      file += mib;
    else if (name == "[heap]")
      heap += mib;
    else if (name.empty())
      anon += mib;
    else
      other += mib;
  }
  const struct mallinfo2 mi = mallinfo2();
  std::printf(
      "  memory: model file %.1f MiB, heap %.1f MiB (malloc: %.1f MiB in use, %.1f MiB free), other "
      "anonymous "
      "%.1f MiB (malloc's mmapped blocks %.1f MiB), code and other files %.1f MiB\n",
      file, heap, (mi.uordblks) / 1048576.0, mi.fordblks / 1048576.0, anon, mi.hblkhd / 1048576.0, other);
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<int> ParseList(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    p = std::strchr(p, ',');
    if (!p) break;
    ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = ragd::bench::GemmaModelPath();
  std::vector<int> threads = {1, 2};
  int n_prompt = 512, n_decode = 128;
  int chunk = 256;  // prompt tokens per forward step
  bool f16_attention = true, memory = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--f32-attention") {
      f16_attention = false;
      continue;
    }
    if (a == "--memory") {
      memory = true;
      continue;
    }
    if (i + 1 >= argc) break;
    const char* value = argv[++i];
    if (a == "--model")
      path = value;
    else if (a == "--threads")
      threads = ParseList(value);
    else if (a == "--prompt")
      n_prompt = std::atoi(value);
    else if (a == "--decode")
      n_decode = std::atoi(value);
  }
  if (n_prompt < 1 || n_decode < 1 || chunk < 1) {
    std::fprintf(stderr, "bench_engine: --prompt, --decode and --chunk must be >= 1\n");
    return 2;
  }
  auto file = GgufFile::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "bench_engine: %s\n", file.status().ToString().c_str());
    return 1;
  }
  // As Engine::Load: the tokenizer, the model, then the metadata released.
  auto tok = Tokenizer::FromGguf(*file);
  if (!tok.ok()) return 1;
  malloc_trim(0);
  ModelOptions options;
  options.f16_attention = f16_attention;
  auto model = LoadModel(*file, options);
  if (!model.ok()) {
    std::fprintf(stderr, "bench_engine: %s\n", model.status().ToString().c_str());
    return 1;
  }
  file->ReleaseMetadata();
  malloc_trim(0);
  // A natural-text prompt of exactly n_prompt tokens.
  std::vector<int32_t> prompt = {(*tok)->bos_id()};
  const auto words = (*tok)->Encode(
      "The history of the city begins with a small settlement on the river bank, where traders met to "
      "exchange "
      "grain, salt and cloth. Over the centuries it grew into a market town, then a port, and finally the "
      "capital "
      "of a province whose roads and canals connected it to the rest of the country. ");
  while (static_cast<int>(prompt.size()) < n_prompt) {
    for (int32_t t : *words) {
      if (static_cast<int>(prompt.size()) < n_prompt) prompt.push_back(t);
    }
  }
  Model& m = **model;
  const int64_t vocab = m.config().n_vocab;
  std::printf("model %s (%.1f MiB), %u cores, kernels %s, attention %s, prompt %d tokens, decode %d tokens\n",
              path.c_str(), file->file_size() / 1048576.0, std::thread::hardware_concurrency(),
              KernelIsaName().c_str(), f16_attention ? "f16" : "f32", n_prompt, n_decode);
  for (int nt : threads) {
    ThreadPool pool(nt);
    auto cache = m.NewCache(n_prompt + n_decode);
    std::vector<float> logits;
    SequenceStep step{cache.get(), prompt, false, &logits};
    // The prompt in steps of at most `chunk` tokens, as the server's batching
    // loop feeds it (inference.step_tokens): the logits are bitwise the same,
    // the activation scratch is sized for one chunk.
    auto t0 = std::chrono::steady_clock::now();
    for (int p = 0; p < n_prompt; p += chunk) {
      const int n = std::min(chunk, n_prompt - p);
      step.tokens = std::span<const int32_t>(prompt.data() + p, n);
      step.logits = p + n == n_prompt ? &logits : nullptr;
      if (!m.Forward(std::span<SequenceStep>(&step, 1), &pool).ok()) return 1;
    }
    step.logits = &logits;
    const double prefill_s = Seconds(t0);
    int32_t next = 0;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n_decode; ++i) {
      next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      step.tokens = std::span<const int32_t>(&next, 1);
      if (!m.Forward(std::span<SequenceStep>(&step, 1), &pool).ok()) return 1;
    }
    const double decode_s = Seconds(t0);
    std::printf(
        "threads %d: prefill %.1f tok/s (%.0f ms), decode %.1f tok/s (%.1f ms/token), KV cache %.1f MiB, "
        "RSS %.1f MiB (peak %.1f MiB)\n",
        nt, n_prompt / prefill_s, prefill_s * 1e3, n_decode / decode_s, decode_s * 1e3 / n_decode,
        cache->bytes() / 1048576.0, StatusMiB("VmRSS:"), StatusMiB("VmHWM:"));
    const double budget = (file->file_size() + cache->bytes()) / 1048576.0 + 64;
    std::printf("  memory budget (model file + KV cache + 64 MiB) %.1f MiB: peak RSS %s\n", budget,
                StatusMiB("VmHWM:") <= budget ? "within" : "OVER");
    if (memory) PrintMemory(path);
    (void)vocab;
  }
  return 0;
}
