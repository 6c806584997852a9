#include "inference/engine.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "inference/ggml_types.h"
#include "inference/gguf.h"
#include "inference/gguf_names.h"
#include "inference/grammar/json_grammar.h"
#include "inference/kernels/kernels.h"
#include "inference/models/model.h"
#include "inference/sequence.h"

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

struct Engine::GrammarIndex {
  std::once_flag once;
  std::unique_ptr<GrammarVocabulary> vocabulary;
};

const GrammarVocabulary& Engine::grammar_vocabulary() const {
  std::call_once(grammar_index_->once,
                 [this] { grammar_index_->vocabulary = std::make_unique<GrammarVocabulary>(*tokenizer_); });
  return *grammar_index_->vocabulary;
}

size_t Generation::kv_cache_bytes() const { return cache_ ? cache_->bytes() : 0; }

Result<std::unique_ptr<Engine>> Engine::Load(const EngineOptions& options) {
  if (options.context_length < 0) return Status::InvalidArgument("context_length must be >= 0");
  auto file = GgufFile::Open(options.model_path);
  if (!file.ok()) return file.status();
  std::unique_ptr<Engine> e(new Engine());
  e->file_ = std::make_unique<GgufFile>(std::move(file).value());
  // The tokenizer first: building it takes ~65 MiB for a while (the
  // vocabulary as a SentencePiece model, then parsed), which the packed
  // weights would otherwise be resident beside.
  auto tok = Tokenizer::FromGguf(*e->file_);
  if (!tok.ok()) return tok.status();
  e->tokenizer_ = std::move(tok).value();
  malloc_trim(0);
  e->info_.name = e->file_->GetString(std::string(keys::kName)).value_or("");
  e->info_.quantization =
      std::string(FileTypeName(e->file_->GetInt(std::string(keys::kFileType)).value_or(-1)));
  for (const GgufTensor& t : e->file_->tensors()) e->info_.parameters += static_cast<int64_t>(t.n_elements());
  if (options.chat_template.empty()) {
    e->chat_template_ = DetectChatTemplate(*e->file_);
  } else {
    auto t = ParseChatTemplate(options.chat_template);
    if (!t.ok()) return t.status();
    e->chat_template_ = *t;
  }
  e->instruction_tuned_ = !e->file_->GetString(std::string(keys::kChatTemplate)).value_or("").empty();
  e->architecture_ = e->file_->GetString(std::string(keys::kArchitecture)).value_or("");
  if (options.vocabulary_only) {
    // The tensors stay mapped but untouched: no page of weights is read.
    const int64_t trained =
        e->file_->GetInt(ArchKey(e->architecture_, keys::kContextLength)).value_or(options.context_length);
    if (trained <= 0) return Status::Corrupt("the model file gives no context length");
    if (options.context_length > trained) {
      return Status::InvalidArgument("context_length " + std::to_string(options.context_length) +
                                     " exceeds the model's " + std::to_string(trained));
    }
    e->context_length_ = static_cast<int>(options.context_length > 0 ? options.context_length : trained);
    e->file_->ReleaseMetadata();
    malloc_trim(0);
    return e;
  }
  auto model = LoadModel(*e->file_);
  if (!model.ok()) return model.status();
  e->model_ = std::move(model).value();
  // The tokenizer has its own copy of the vocabulary: drop the parsed arrays
  // and the mapped header, and hand the freed heap back to the system.
  e->file_->ReleaseMetadata();
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
  e->nice_ = options.nice;
  e->pool_ = std::make_unique<ThreadPool>(options.threads, options.nice);
  e->forward_lock_ = std::make_unique<Lock>();
  e->grammar_index_ = std::make_unique<GrammarIndex>();
  return e;
}

Engine::~Engine() = default;

Result<std::vector<TokenId>> Engine::FormatChat(const std::vector<ChatMessage>& messages) const {
  return inference::FormatChat(*tokenizer_, chat_template_, messages);
}

Result<std::vector<TokenId>> Engine::PlainPrompt(std::string_view text) const {
  auto ids = tokenizer_->Encode(text);
  if (!ids.ok()) return ids.status();
  if (tokenizer_->add_bos() && tokenizer_->bos_id() >= 0) ids->insert(ids->begin(), tokenizer_->bos_id());
  return ids;
}

int Engine::threads() const { return pool_ ? pool_->size() : 0; }
const std::string& Engine::architecture() const { return architecture_; }
size_t Engine::model_file_bytes() const { return file_->file_size(); }

Status Engine::Forward(std::span<SequenceStep> steps) {
  std::lock_guard<std::mutex> lock(forward_lock_->mu);
  return model_->Forward(steps, pool_.get());
}

void Engine::RunOnThreads(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
  std::lock_guard<std::mutex> lock(forward_lock_->mu);
  pool_->RunDynamic(n, 1, fn);
}

Result<std::unique_ptr<Generation>> Engine::Start(const GenerationRequest& request) {
  if (!model_) return Status::Unsupported("this model is loaded for its vocabulary only and cannot generate");
  auto sequence = Sequence::Create(request, *tokenizer_, context_length_,
                                   request.grammar ? &grammar_vocabulary() : nullptr);
  if (!sequence.ok()) return sequence.status();
  return std::unique_ptr<Generation>(new Generation(*this, std::move(sequence).value()));
}

Generation::Generation(Engine& engine, std::unique_ptr<Sequence> sequence)
    : engine_(engine), sequence_(std::move(sequence)) {
  stats_.prompt_tokens = sequence_->prompt_tokens();
  cache_ = engine_.model_->NewCache(sequence_->kv_capacity());
}

Generation::~Generation() = default;

void Generation::Finish(FinishReason reason) {
  reason_ = reason;
  cache_.reset();  // the KV memory is not needed any more
}

Result<std::optional<GenerationChunk>> Generation::Next() {
  if (done()) return std::optional<GenerationChunk>();
  if (cancel_.cancelled()) {
    Finish(FinishReason::kCancelled);
    return std::optional<GenerationChunk>();
  }
  const auto start = std::chrono::steady_clock::now();
  const bool prefill = completion_.empty();
  const std::vector<TokenId>& tokens = sequence_->tokens();
  const int64_t n_past = cache_->n_past();
  SequenceStep step;
  step.cache = cache_.get();
  step.tokens = std::span<const TokenId>(tokens.data() + n_past, tokens.size() - n_past);
  step.logits = &logits_;
  if (Status st = engine_.Forward(std::span<SequenceStep>(&step, 1)); !st.ok()) {
    Finish(FinishReason::kStop);
    return st;
  }
  FinishReason reason = FinishReason::kNone;
  auto chunk = sequence_->Step(logits_, &reason);
  if (!chunk.ok()) {
    Finish(FinishReason::kStop);
    return chunk.status();
  }
  completion_.push_back(chunk->id);
  stats_.completion_tokens = static_cast<int>(completion_.size());
  if (reason != FinishReason::kNone) Finish(reason);
  (prefill ? stats_.prompt_ms : stats_.decode_ms) += MsSince(start);
  return std::optional<GenerationChunk>(std::move(chunk).value());
}

}  // namespace ragd::inference
