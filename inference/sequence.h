// The per-request decoding state shared by Generation (one request driven by
// its caller) and the Scheduler (many requests batched together): the token
// history, the sampler, stop strings, the incremental detokenizer, and the
// counts. It knows nothing of KV caches or forward passes: whoever runs the
// model hands it one row of logits at a time. Internal to inference/.
//
// Thread-safety: one thread at a time.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "inference/engine.h"
#include "inference/grammar/json_grammar.h"

namespace ragd::inference {

class Sequence {
 public:
  // Validates `request` as Engine::Start documents (prompt non-empty and no
  // longer than `context_length`, ids inside the vocabulary, max_tokens >= 1,
  // sampling options, stop strings).
  // `vocabulary` masks tokens for a request with a grammar (required then,
  // ignored otherwise).
  static Result<std::unique_ptr<Sequence>> Create(const GenerationRequest& request,
                                                  const Tokenizer& tokenizer, int context_length,
                                                  const GrammarVocabulary* vocabulary = nullptr);

  const std::vector<TokenId>& tokens() const { return tokens_; }  // prompt then completion
  std::span<const TokenId> prompt() const { return {tokens_.data(), static_cast<size_t>(prompt_tokens_)}; }
  int prompt_tokens() const { return prompt_tokens_; }
  // KV positions this sequence can ever need: the k-th completion token is
  // sampled after prompt + k - 1 positions.
  int64_t kv_capacity() const { return std::max<int64_t>(1, prompt_tokens_ + max_completion_ - 1); }
  int completion_tokens() const { return static_cast<int>(tokens_.size()) - prompt_tokens_; }
  int max_completion() const { return max_completion_; }

  // Samples the next token from one row of logits, appends it and returns its
  // chunk. When the token ends the generation (end-of-generation token, stop
  // string, max_tokens, a grammar with nothing left to allow), *reason is set
  // and the chunk carries the held-back tail. An error (an id the
  // detokenizer refuses) ends the sequence.
  //
  // With a grammar the token is drawn as usual and kept when the grammar
  // allows it; otherwise the logits of every token it does not allow are set
  // to -inf and the token drawn again. Accepting an allowed first draw is
  // exact: it is rejection sampling from the masked distribution, and it
  // spares the full mask on most steps.
  Result<GenerationChunk> Step(std::span<const float> logits, FinishReason* reason);

 private:
  Sequence(const GenerationRequest& request, const Tokenizer& tokenizer, int max_completion, Sampler sampler,
           StopMatcher stops);
  // The next token under the grammar; -1 when it allows none.
  TokenId SampleConstrained(std::span<const float> logits);

  const Tokenizer& tokenizer_;
  std::vector<TokenId> tokens_;
  int prompt_tokens_ = 0;
  int max_completion_ = 0;
  Sampler sampler_;
  StopMatcher stops_;
  IncrementalDecoder decoder_;
  int logprobs_ = -1;
  const GrammarVocabulary* vocabulary_ = nullptr;
  std::unique_ptr<JsonMatcher> matcher_;  // the grammar's state; null without one
  std::vector<float> masked_;             // a logits row with disallowed tokens at -inf
  std::vector<uint8_t> allowed_;
};

}  // namespace ragd::inference
