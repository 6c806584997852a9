// Per-token cost of JSON-constrained sampling on a real vocabulary.
//
//   bench_grammar [model.gguf]   (default: Qwen2.5-Coder 0.5B from the models folder)
//
// A structured answer is tokenized and replayed token by token through the
// grammar. For each position it times (a) the check of the drawn token (what
// every step pays: Sequence keeps an allowed first draw) and (b) the full
// mask over the vocabulary (what a step pays when the first draw is refused).
// Prints the vocabulary-index build time, mean and worst microseconds per
// token for both, and the core count.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "bench/bench_paths.h"
#include "inference/gguf.h"
#include "inference/grammar/json_grammar.h"
#include "inference/tokenizer/tokenizer.h"

using namespace ragd::inference;
using Clock = std::chrono::steady_clock;

namespace {

double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

constexpr const char* kSchema = R"({"type":"object","properties":{
  "name":{"type":"string"},"country":{"type":"string"},"population":{"type":"integer"},
  "coastal":{"type":"boolean"},"districts":{"type":"array","items":{"type":"object",
  "properties":{"name":{"type":"string"},"area_km2":{"type":"number"}},"required":["name","area_km2"]}}},
  "required":["name","country","population","coastal","districts"],"additionalProperties":false})";

constexpr const char* kAnswer = R"({
  "name": "Lisbon",
  "country": "Portugal",
  "population": 545923,
  "coastal": true,
  "districts": [
    {"name": "Alfama", "area_km2": 0.48},
    {"name": "Baixa", "area_km2": 0.39},
    {"name": "Belém, with the tower and the monastery", "area_km2": 10.4}
  ]
})";

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : ragd::bench::ModelsDir() + "/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";
  auto gguf = GgufFile::Open(path);
  if (!gguf.ok()) return std::fprintf(stderr, "%s\n", gguf.status().ToString().c_str()), 1;
  auto tok = Tokenizer::FromGguf(*gguf);
  if (!tok.ok()) return std::fprintf(stderr, "%s\n", tok.status().ToString().c_str()), 1;
  auto grammar = JsonGrammar::FromSchema(kSchema);
  if (!grammar.ok()) return std::fprintf(stderr, "%s\n", grammar.status().ToString().c_str()), 1;
  auto ids = (*tok)->Encode(kAnswer);
  if (!ids.ok()) return 1;

  const auto b0 = Clock::now();
  GrammarVocabulary vocab(**tok);
  const double build_ms = Us(b0, Clock::now()) / 1000;

  JsonMatcher m(*grammar);
  std::vector<uint8_t> allowed;
  double check_sum = 0, check_max = 0, mask_sum = 0, mask_max = 0;
  const int rounds = 3;
  for (TokenId id : *ids) {
    double check = 1e30, mask = 1e30;  // best of a few rounds: the cost, not the noise
    for (int r = 0; r < rounds; ++r) {
      const auto a = Clock::now();
      const bool ok = vocab.Allows(m, id);
      const auto b = Clock::now();
      vocab.AllowedTokens(m, &allowed);
      const auto c = Clock::now();
      if (!ok || !allowed[id]) return std::fprintf(stderr, "token %d refused\n", id), 1;
      check = std::min(check, Us(a, b));
      mask = std::min(mask, Us(b, c));
    }
    check_sum += check;
    check_max = std::max(check_max, check);
    mask_sum += mask;
    mask_max = std::max(mask_max, mask);
    vocab.Accept(&m, id);
  }
  const double n = static_cast<double>(ids->size());
  std::printf("vocabulary: %d tokens, index built in %.0f ms; answer: %zu tokens; %u cores\n",
              vocab.vocab_size(), build_ms, ids->size(), std::thread::hardware_concurrency());
  std::printf("check of the drawn token: mean %.2f us, worst %.2f us per token\n", check_sum / n, check_max);
  std::printf("full vocabulary mask:     mean %.0f us, worst %.0f us per token\n", mask_sum / n, mask_max);
  return m.CanEnd() ? 0 : 1;
}
