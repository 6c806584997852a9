// `ragd generate`: runs the language model on one prompt and streams the
// completion to stdout; speeds go to stderr.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "app/cli/commands.h"
#include "app/config/config.h"
#include "app/config/flags.h"
#include "app/services/model_bootstrap.h"
#include "inference/engine.h"
#include "inference/kernels/kernels.h"
#include "inference/tokenizer/chat_format.h"

namespace ragd::app {
namespace {

bool ParseNumber(const Flags& flags, const std::string& name, double* out) {
  auto v = flags.Get(name);
  if (!v) return true;
  char* end = nullptr;
  *out = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0') {
    std::fprintf(stderr, "ragd generate: %s wants a number, got '%s'\n", name.c_str(), v->c_str());
    return false;
  }
  return true;
}

// --model is a file (a path, or a name ending in .gguf) or the id of one of
// the configured LLMs ("qwen2.5-coder-0.5b-instruct-q4_k_m"); none: the first.
std::string ModelPathFor(const std::optional<std::string>& model) {
  const Config config;
  if (!model) return config.LlmPath();
  if (model->find('/') != std::string::npos || model->ends_with(".gguf")) return *model;
  for (const std::string& path : config.LlmPaths()) {
    if (LlmId(path) == *model) return path;
  }
  return *model;  // not a configured id: the engine reports the missing file
}

}  // namespace

int RunGenerate(const std::vector<std::string>& args) {
  Flags flags(
      "ragd generate --prompt TEXT [--model ID|PATH] [-n N] [--temp T] [--seed S] [--chat] [--threads N]",
      "Generates a completion of TEXT with the language model, streaming it to stdout.\n"
      "Prompt and generation speeds (tokens/s) are printed on stderr.");
  flags.Value("--model", "-m", "a configured model's id, or a GGUF file (default: the first configured LLM)");
  flags.Value("--prompt", "-p", "prompt text");
  flags.Value("--n-predict", "-n", "most tokens to generate (default 128)");
  flags.Value("--temp", "", "sampling temperature; 0 = greedy (default 0.8)");
  flags.Value("--seed", "", "sampling seed (default: random)");
  flags.Value("--threads", "-t", "compute threads; 0 = one per core (default 0)");
  flags.Value("--ctx", "", "context length; 0 = the model's (default 8192)");
  flags.Bool("--chat", "", "wrap the prompt as one user turn of the model's chat format");
  if (auto code = ParseOrExit(flags, args)) return *code;
  auto prompt_text = flags.Get("--prompt");
  if (!prompt_text) {
    std::fprintf(stderr, "ragd generate: give --prompt TEXT (see --help)\n");
    return 2;
  }
  double n_predict = 128, temp = 0.8, seed = -1, threads = 0, ctx = 8192;
  if (!ParseNumber(flags, "--n-predict", &n_predict) || !ParseNumber(flags, "--temp", &temp) ||
      !ParseNumber(flags, "--seed", &seed) || !ParseNumber(flags, "--threads", &threads) ||
      !ParseNumber(flags, "--ctx", &ctx)) {
    return 2;
  }

  inference::EngineOptions options;
  options.model_path = ModelPathFor(flags.Get("--model"));
  options.threads = static_cast<int>(threads);
  options.context_length = static_cast<int>(ctx);
  auto engine = inference::Engine::Load(options);
  if (!engine.ok() && engine.status().code() == StatusCode::kInvalidArgument && !flags.Has("--ctx")) {
    options.context_length = 0;  // the model's context is shorter than the default
    engine = inference::Engine::Load(options);
  }
  if (!engine.ok()) {
    std::fprintf(stderr, "ragd generate: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  const inference::Tokenizer& tok = (*engine)->tokenizer();

  inference::GenerationRequest request;
  if (flags.Has("--chat")) {
    auto ids = (*engine)->FormatChat({{"user", *prompt_text}});
    if (!ids.ok()) {
      std::fprintf(stderr, "ragd generate: %s\n", ids.status().ToString().c_str());
      return 1;
    }
    request.prompt = std::move(ids).value();
  } else {
    auto ids = tok.Encode(*prompt_text);
    if (!ids.ok()) {
      std::fprintf(stderr, "ragd generate: %s\n", ids.status().ToString().c_str());
      return 1;
    }
    if (tok.add_bos()) request.prompt.push_back(tok.bos_id());
    request.prompt.insert(request.prompt.end(), ids->begin(), ids->end());
  }
  request.max_tokens = static_cast<int>(n_predict);
  request.sampling.temperature = static_cast<float>(temp);
  if (seed >= 0) request.sampling.seed = static_cast<uint64_t>(seed);

  auto gen = (*engine)->Start(request);
  if (!gen.ok()) {
    std::fprintf(stderr, "ragd generate: %s\n", gen.status().ToString().c_str());
    return 1;
  }
  inference::Generation& g = **gen;
  while (true) {
    auto chunk = g.Next();
    if (!chunk.ok()) {
      std::fprintf(stderr, "\nragd generate: %s\n", chunk.status().ToString().c_str());
      return 1;
    }
    if (!*chunk) break;
    std::fwrite((*chunk)->text.data(), 1, (*chunk)->text.size(), stdout);
    std::fflush(stdout);
  }
  std::printf("\n");
  const auto& s = g.stats();
  const int decoded = s.completion_tokens - 1;  // the first token comes with the prefill
  std::fprintf(stderr,
               "prompt: %d tokens in %.1f ms (%.1f tok/s); generation: %d tokens in %.1f ms (%.1f tok/s); "
               "finish: %s; %d threads, kernels %s\n",
               s.prompt_tokens, s.prompt_ms, s.prompt_tokens * 1000.0 / std::max(s.prompt_ms, 1e-9), decoded,
               s.decode_ms, decoded * 1000.0 / std::max(s.decode_ms, 1e-9),
               std::string(inference::FinishReasonName(g.finish_reason())).c_str(), (*engine)->threads(),
               inference::KernelIsaName().c_str());
  return 0;
}

}  // namespace ragd::app
