#include "inference/engine.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "inference/gguf.h"
#include "inference/kernels/kernels.h"
#include "inference/models/model.h"

namespace ragd::inference {
namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kNone:
      break;
  }
  return "";
}

struct Engine::Lock {
  std::mutex mu;
};

struct Generation::State {
  std::vector<TokenId> tokens;  // prompt then completion: the penalties' history
  int prompt_tokens = 0;
  int max_completion = 0;  // max_tokens capped by the context
  std::unique_ptr<KvCache> cache;
  Sampler sampler;
  StopMatcher stops;
  IncrementalDecoder decoder;
  std::vector<float> logits;
};

size_t Generation::kv_cache_bytes() const { return state_->cache ? state_->cache->bytes() : 0; }

Result<std::unique_ptr<Engine>> Engine::Load(const EngineOptions& options) {
  if (options.context_length < 0) return Status::InvalidArgument("context_length must be >= 0");
  auto file = GgufFile::Open(options.model_path);
  if (!file.ok()) return file.status();
  std::unique_ptr<Engine> e(new Engine());
  e->file_ = std::make_unique<GgufFile>(std::move(file).value());
  auto model = LoadModel(*e->file_);
  if (!model.ok()) return model.status();
  e->model_ = std::move(model).value();
  auto tok = Tokenizer::FromGguf(*e->file_);
  if (!tok.ok()) return tok.status();
  e->tokenizer_ = std::move(tok).value();
  // The tokenizer has its own copy of the vocabulary: drop the parsed arrays
  // and hand the freed heap back to the system.
  e->file_->ReleaseArrayValues();
  malloc_trim(0);
  if (e->tokenizer_->vocab_size() != e->model_->config().n_vocab) {
    return Status::Corrupt("vocabulary has " + std::to_string(e->tokenizer_->vocab_size()) +
                           " tokens but token_embd.weight has " +
                           std::to_string(e->model_->config().n_vocab) + " rows");
  }
  const int64_t trained = e->model_->config().context_length;
  if (options.context_length > trained) {
    return Status::InvalidArgument("context_length " + std::to_string(options.context_length) +
                                   " exceeds the model's " + std::to_string(trained));
  }
  e->context_length_ = static_cast<int>(options.context_length > 0 ? options.context_length : trained);
  e->pool_ = std::make_unique<ThreadPool>(options.threads);
  e->forward_lock_ = std::make_unique<Lock>();
  return e;
}

Engine::~Engine() = default;

int Engine::threads() const { return pool_->size(); }
const std::string& Engine::architecture() const { return model_->config().architecture; }
size_t Engine::model_file_bytes() const { return file_->file_size(); }

Result<std::unique_ptr<Generation>> Engine::Start(const GenerationRequest& request) {
  const int n_prompt = static_cast<int>(request.prompt.size());
  if (n_prompt == 0) return Status::InvalidArgument("the prompt is empty");
  if (n_prompt > context_length_) {
    return Status::OutOfRange("the prompt has " + std::to_string(n_prompt) +
                              " tokens but the context holds " + std::to_string(context_length_));
  }
  const int vocab = static_cast<int>(model_->config().n_vocab);
  for (int i = 0; i < n_prompt; ++i) {
    const TokenId t = request.prompt[i];
    if (t < 0 || t >= vocab) {
      return Status::OutOfRange("prompt token " + std::to_string(i) + " has id " + std::to_string(t) +
                                ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
  if (request.max_tokens < 1) return Status::InvalidArgument("max_tokens must be >= 1");
  auto sampler = Sampler::Create(request.sampling, vocab);
  if (!sampler.ok()) return sampler.status();
  auto stops = StopMatcher::Create(request.stop);
  if (!stops.ok()) return stops.status();

  // The k-th completion token is sampled after prompt + k - 1 positions.
  const int max_completion = std::min(request.max_tokens, context_length_ - n_prompt + 1);
  const int64_t capacity = std::max<int64_t>(1, n_prompt + max_completion - 1);
  auto state = std::unique_ptr<Generation::State>(new Generation::State{request.prompt,
                                                                        n_prompt,
                                                                        max_completion,
                                                                        model_->NewCache(capacity),
                                                                        std::move(sampler).value(),
                                                                        std::move(stops).value(),
                                                                        IncrementalDecoder(*tokenizer_),
                                                                        {}});
  state->tokens.reserve(n_prompt + max_completion);
  return std::unique_ptr<Generation>(new Generation(*this, std::move(state)));
}

Generation::Generation(Engine& engine, std::unique_ptr<State> state)
    : engine_(engine), state_(std::move(state)) {
  stats_.prompt_tokens = state_->prompt_tokens;
}

Generation::~Generation() = default;

void Generation::Finish(FinishReason reason, GenerationChunk* last) {
  reason_ = reason;
  state_->cache.reset();  // the KV memory is not needed any more
  if (last == nullptr) return;
  std::string tail = state_->decoder.Flush();
  if (!state_->stops.stopped()) last->text += state_->stops.Push(tail);
  if (!state_->stops.stopped()) last->text += state_->stops.Flush();
}

Result<std::optional<GenerationChunk>> Generation::Next() {
  if (done()) return std::optional<GenerationChunk>();
  if (cancel_.cancelled()) {
    Finish(FinishReason::kCancelled, nullptr);
    return std::optional<GenerationChunk>();
  }
  State& s = *state_;
  const auto start = std::chrono::steady_clock::now();
  const bool prefill = completion_.empty();
  const int64_t n_past = s.cache->n_past();
  SequenceStep step;
  step.cache = s.cache.get();
  step.tokens = std::span<const TokenId>(s.tokens.data() + n_past, s.tokens.size() - n_past);
  step.logits = &s.logits;
  {
    std::lock_guard<std::mutex> lock(engine_.forward_lock_->mu);
    Status st = engine_.model_->Forward(std::span<SequenceStep>(&step, 1), engine_.pool_.get());
    if (!st.ok()) {
      Finish(FinishReason::kStop, nullptr);
      return st;
    }
  }
  GenerationChunk chunk;
  chunk.id = s.sampler.Sample(s.logits, s.tokens);
  s.tokens.push_back(chunk.id);
  completion_.push_back(chunk.id);
  stats_.completion_tokens = static_cast<int>(completion_.size());

  FinishReason reason = FinishReason::kNone;
  const Tokenizer& tok = engine_.tokenizer();
  if (tok.IsEndOfGeneration(chunk.id)) {
    reason = FinishReason::kStop;
  } else {
    auto text = s.decoder.Push(chunk.id);
    if (!text.ok()) {
      Finish(FinishReason::kStop, nullptr);
      return text.status();
    }
    chunk.text = s.stops.Push(*text);
    if (s.stops.stopped()) reason = FinishReason::kStop;
  }
  if (reason == FinishReason::kNone && stats_.completion_tokens >= s.max_completion)
    reason = FinishReason::kLength;
  if (reason != FinishReason::kNone) Finish(reason, &chunk);
  (prefill ? stats_.prompt_ms : stats_.decode_ms) += MsSince(start);
  return std::optional<GenerationChunk>(std::move(chunk));
}

}  // namespace ragd::inference
