#include "inference/sequence.h"

#include <algorithm>
#include <limits>

namespace ragd::inference {

Result<std::unique_ptr<Sequence>> Sequence::Create(const GenerationRequest& request,
                                                   const Tokenizer& tokenizer, int context_length,
                                                   const GrammarVocabulary* vocabulary) {
  const int n_prompt = static_cast<int>(request.prompt.size());
  if (n_prompt == 0) return Status::InvalidArgument("the prompt is empty");
  if (n_prompt > context_length) {
    return Status::OutOfRange("the prompt has " + std::to_string(n_prompt) +
                              " tokens but the context holds " + std::to_string(context_length));
  }
  const int vocab = tokenizer.vocab_size();
  for (int i = 0; i < n_prompt; ++i) {
    const TokenId t = request.prompt[i];
    if (t < 0 || t >= vocab) {
      return Status::OutOfRange("prompt token " + std::to_string(i) + " has id " + std::to_string(t) +
                                ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
  if (request.max_tokens < 1) return Status::InvalidArgument("max_tokens must be >= 1");
  if (request.logprobs < -1 || request.logprobs > kMaxTopLogprobs)
    return Status::InvalidArgument("logprobs must be in [-1, " + std::to_string(kMaxTopLogprobs) + "]");
  if (request.grammar && (vocabulary == nullptr || vocabulary->vocab_size() != vocab))
    return Status::InvalidArgument("a grammar needs the model's vocabulary index");
  auto sampler = Sampler::Create(request.sampling, vocab);
  if (!sampler.ok()) return sampler.status();
  auto stops = StopMatcher::Create(request.stop);
  if (!stops.ok()) return stops.status();
  const int max_completion = std::min(request.max_tokens, context_length - n_prompt + 1);
  std::unique_ptr<Sequence> seq(
      new Sequence(request, tokenizer, max_completion, std::move(sampler).value(), std::move(stops).value()));
  if (request.grammar) {
    seq->vocabulary_ = vocabulary;
    seq->matcher_ = std::make_unique<JsonMatcher>(request.grammar);
  }
  return seq;
}

Sequence::Sequence(const GenerationRequest& request, const Tokenizer& tokenizer, int max_completion,
                   Sampler sampler, StopMatcher stops)
    : tokenizer_(tokenizer),
      tokens_(request.prompt),
      prompt_tokens_(static_cast<int>(request.prompt.size())),
      max_completion_(max_completion),
      sampler_(std::move(sampler)),
      stops_(std::move(stops)),
      decoder_(tokenizer),
      logprobs_(request.logprobs) {
  tokens_.reserve(prompt_tokens_ + max_completion_);
}

TokenId Sequence::SampleConstrained(std::span<const float> logits) {
  const TokenId first = sampler_.Sample(logits, tokens_);
  if (vocabulary_->Accept(matcher_.get(), first)) return first;
  vocabulary_->AllowedTokens(*matcher_, &allowed_);
  masked_.assign(logits.begin(), logits.end());
  bool any = false;
  for (size_t i = 0; i < masked_.size(); ++i) {
    if (i >= allowed_.size() || !allowed_[i]) {
      masked_[i] = -std::numeric_limits<float>::infinity();
    } else {
      any = true;
    }
  }
  if (!any) return -1;
  const TokenId id = sampler_.Sample(masked_, tokens_);
  // Every allowed logit may be -inf (the bias): the sampler then returns the
  // lowest id, allowed or not.
  return vocabulary_->Accept(matcher_.get(), id) ? id : -1;
}

Result<GenerationChunk> Sequence::Step(std::span<const float> logits, FinishReason* reason) {
  *reason = FinishReason::kNone;
  GenerationChunk chunk;
  chunk.id = matcher_ ? SampleConstrained(logits) : sampler_.Sample(logits, tokens_);
  if (chunk.id < 0) {  // the grammar allows nothing more: end here, as at a stop string
    *reason = FinishReason::kStop;
    chunk.id = tokenizer_.eos_id() >= 0 ? tokenizer_.eos_id() : 0;
    if (!tokenizer_.IsEndOfGeneration(chunk.id)) {
      chunk.text = stops_.Push(decoder_.Flush());
      if (!stops_.stopped()) chunk.text += stops_.Flush();
    }
    tokens_.push_back(chunk.id);
    return chunk;
  }
  if (logprobs_ >= 0) chunk.logprob = TokenLogprobs(logits, chunk.id, logprobs_, &chunk.top_logprobs);
  tokens_.push_back(chunk.id);
  if (tokenizer_.IsEndOfGeneration(chunk.id)) {
    *reason = FinishReason::kStop;
  } else {
    auto text = decoder_.Push(chunk.id);
    if (!text.ok()) return text.status();
    chunk.text = stops_.Push(*text);
    if (stops_.stopped()) *reason = FinishReason::kStop;
  }
  if (*reason == FinishReason::kNone && completion_tokens() >= max_completion_)
    *reason = FinishReason::kLength;
  if (*reason != FinishReason::kNone) {
    const std::string tail = decoder_.Flush();
    if (!stops_.stopped()) chunk.text += stops_.Push(tail);
    if (!stops_.stopped()) chunk.text += stops_.Flush();
  }
  return chunk;
}

}  // namespace ragd::inference
