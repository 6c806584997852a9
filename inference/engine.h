// The language-model engine: loads a GGUF model (weights stay memory-mapped),
// owns its tokenizer, KV caches and compute threads, and runs generations.
//
//   auto engine = Engine::Load({.model_path = path});
//   auto prompt = engine->FormatChat(messages);
//   auto gen = engine->Start({.prompt = *prompt, .max_tokens = 128});
//   while (auto chunk = gen->Next(); chunk.ok() && *chunk) emit((*chunk)->text);
//   gen->finish_reason(), gen->stats()
//
// Thread-safety: Engine's const methods may be called from any thread. A
// Generation is used from one thread at a time (its CancelHandle from any);
// several Generations may run on different threads: their forward passes are
// serialized inside the engine (one at a time; batching several sequences into
// one step is the Scheduler's job, see scheduler.h). The Engine must outlive
// its Generations and Schedulers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "inference/tokenizer/chat_format.h"
#include "inference/tokenizer/sampler.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

class Model;
class ThreadPool;
class GgufFile;
class KvCache;
struct SequenceStep;

struct EngineOptions {
  std::string model_path;     // GGUF model file
  int threads = 0;            // compute threads; 0 = one per core
  int context_length = 0;     // most positions (prompt + completion) per sequence; 0 = the model's
  int nice = 0;               // niceness of the compute threads (0..19); see ThreadPool
  std::string chat_template;  // "" = the one the file was trained with (chat_format.h names)
  // Only what prompts and token counts need (tokenizer, chat template, context
  // length, model facts): no weights are read and no threads start, and
  // Start() is kUnsupported. For a model that generates elsewhere (an upstream pool).
  bool vocabulary_only = false;
};

enum class FinishReason { kNone, kStop, kLength, kCancelled };
// "stop", "length", "cancelled" ("" for kNone), as the OpenAI API spells them.
std::string_view FinishReasonName(FinishReason reason);

class JsonGrammar;
class GrammarVocabulary;

struct GenerationRequest {
  std::vector<TokenId> prompt;    // token ids, BOS included (see chat_format.h)
  SamplingOptions sampling;       // temperature 0 = greedy
  int max_tokens = 256;           // completion tokens at most (>= 1); the context may end it sooner
  std::vector<std::string> stop;  // output is cut before the first of these strings
  // -1: no log-probabilities; n in [0, kMaxTopLogprobs]: each chunk carries
  // its token's log-probability and the n most likely tokens' (TokenLogprobs).
  int logprobs = -1;
  // When set, only tokens whose text continues a text the grammar accepts are
  // sampled, and generation ends only where it may (grammar/json_grammar.h).
  std::shared_ptr<const JsonGrammar> grammar;
  // Whose prompt this is. A request must not learn another's prompt or
  // answer from the shared state that makes it faster (the prefix cache and
  // its cached_tokens count, the scheduler's shared draft phrasing): prompt
  // positions past the first `shared_prefix` (text the server wrote, such as
  // RAG rules) are reused only between requests of the same scope, and
  // drafts come only from answers of the same scope. 0 is one scope for all.
  uint64_t cache_scope = 0;
  int64_t shared_prefix = 0;
};

struct GenerationStats {
  int prompt_tokens = 0;
  int completion_tokens = 0;  // sampled tokens, an end-of-generation token included
  int cached_tokens = 0;      // prompt tokens whose keys/values came from the prefix cache
  int draft_tokens = 0;       // speculative draft tokens proposed
  int draft_accepted = 0;     // draft tokens that matched what the model chose
  double prompt_ms = 0;       // prefill of the prompt and the first sample
  double decode_ms = 0;       // every later token
  double queue_ms = 0;        // waiting for admission (the scheduler; 0 for Engine::Generate)
};

// One sampled token and the text it completes (may be empty: a control token,
// part of a UTF-8 character, or text held back as a possible stop string).
// The chunk that finishes a generation also carries the held-back tail.
struct GenerationChunk {
  TokenId id = -1;
  std::string text;
  float logprob = 0;                       // when GenerationRequest::logprobs >= 0
  std::vector<TokenLogprob> top_logprobs;  // the request's logprobs most likely, best first
};

// Cancels one generation. Copyable; Cancel() is safe from any thread.
class CancelHandle {
 public:
  CancelHandle() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void Cancel() const { flag_->store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

class Engine;
class Sequence;

class Generation {
 public:
  ~Generation();
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // Runs the model for the next token. nullopt once finished (see
  // finish_reason()); the first call prefills the prompt. After an error the
  // generation is finished.
  Result<std::optional<GenerationChunk>> Next();

  bool done() const { return reason_ != FinishReason::kNone; }
  FinishReason finish_reason() const { return reason_; }
  const GenerationStats& stats() const { return stats_; }
  CancelHandle cancel_handle() const { return cancel_; }
  // All completion token ids so far.
  const std::vector<TokenId>& completion() const { return completion_; }
  // Memory held by this generation's KV cache (0 once finished).
  size_t kv_cache_bytes() const;

 private:
  friend class Engine;
  Generation(Engine& engine, std::unique_ptr<Sequence> sequence);
  void Finish(FinishReason reason);

  Engine& engine_;
  std::unique_ptr<Sequence> sequence_;
  std::unique_ptr<KvCache> cache_;
  std::vector<float> logits_;
  CancelHandle cancel_;
  FinishReason reason_ = FinishReason::kNone;
  GenerationStats stats_;
  std::vector<TokenId> completion_;
};

class Engine {
 public:
  // Opens and validates the model file, builds the tokenizer, starts threads.
  static Result<std::unique_ptr<Engine>> Load(const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  int context_length() const { return context_length_; }
  int threads() const;
  const std::string& architecture() const;
  size_t model_file_bytes() const;
  // What /v1/models says of the model: read from the file at load.
  struct ModelInfo {
    std::string name;          // general.name, "" when absent
    std::string quantization;  // general.file_type as llama.cpp names it ("Q4_K_M"), "" when unknown
    int64_t parameters = 0;    // elements of all tensors
  };
  const ModelInfo& info() const { return info_; }
  // The chat template prompts are formatted with (kNone: a base model).
  ChatTemplate chat_template() const { return chat_template_; }
  // The file carries its chat template's text (tokenizer.chat_template), as
  // files tuned to follow instructions do; a pretrained model formatted as a
  // chat by its architecture (Gemma 3 270M) does not.
  bool instruction_tuned() const { return instruction_tuned_; }

  // Prompt ids of a conversation in the model's chat template (chat_format.h
  // FormatChat); kUnsupported for a base model.
  Result<std::vector<TokenId>> FormatChat(const std::vector<ChatMessage>& messages) const;
  // Prompt ids of plain text: BOS first when the vocabulary asks for one
  // (tokenizer.ggml.add_bos_token), then the text.
  Result<std::vector<TokenId>> PlainPrompt(std::string_view text) const;

  // The vocabulary index constrained requests mask tokens with; built on
  // first use (a fraction of a second), then shared.
  const GrammarVocabulary& grammar_vocabulary() const;

  // Checks the request and prepares a generation (no model work yet).
  // kInvalidArgument: empty prompt, max_tokens < 1, bad sampling options or an
  // empty stop string. kOutOfRange: a token id outside the vocabulary, or a
  // prompt longer than the context (the message gives both counts; nothing is
  // ever truncated silently). kUnsupported for a vocabulary-only engine.
  Result<std::unique_ptr<Generation>> Start(const GenerationRequest& request);
  // Loaded with EngineOptions::vocabulary_only: threads() is 0.
  bool vocabulary_only() const { return model_ == nullptr; }

 private:
  friend class Generation;
  friend class Scheduler;
  Engine() = default;
  // One forward step of the model, serialized with every other caller's.
  Status Forward(std::span<SequenceStep> steps);
  // fn(begin, end, thread) over [0, n) in chunks of one, on the model's
  // threads (serialized with Forward, which uses them too).
  void RunOnThreads(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn);

  std::unique_ptr<GgufFile> file_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ThreadPool> pool_;
  int context_length_ = 0;
  int nice_ = 0;
  ChatTemplate chat_template_ = ChatTemplate::kNone;
  bool instruction_tuned_ = false;
  ModelInfo info_;
  std::string architecture_;  // general.architecture
  struct Lock;
  std::unique_ptr<Lock> forward_lock_;  // serializes Model::Forward
  struct GrammarIndex;
  std::unique_ptr<GrammarIndex> grammar_index_;  // grammar_vocabulary(), built once
};

}  // namespace ragd::inference
