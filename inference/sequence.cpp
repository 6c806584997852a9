#include "inference/sequence.h"

#include <algorithm>

namespace ragd::inference {

Result<std::unique_ptr<Sequence>> Sequence::Create(const GenerationRequest& request,
                                                   const Tokenizer& tokenizer, int context_length) {
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
  auto sampler = Sampler::Create(request.sampling, vocab);
  if (!sampler.ok()) return sampler.status();
  auto stops = StopMatcher::Create(request.stop);
  if (!stops.ok()) return stops.status();
  const int max_completion = std::min(request.max_tokens, context_length - n_prompt + 1);
  return std::unique_ptr<Sequence>(
      new Sequence(request, tokenizer, max_completion, std::move(sampler).value(), std::move(stops).value()));
}

Sequence::Sequence(const GenerationRequest& request, const Tokenizer& tokenizer, int max_completion,
                   Sampler sampler, StopMatcher stops)
    : tokenizer_(tokenizer),
      tokens_(request.prompt),
      prompt_tokens_(static_cast<int>(request.prompt.size())),
      max_completion_(max_completion),
      sampler_(std::move(sampler)),
      stops_(std::move(stops)),
      decoder_(tokenizer) {
  tokens_.reserve(prompt_tokens_ + max_completion_);
}

Result<GenerationChunk> Sequence::Step(std::span<const float> logits, FinishReason* reason) {
  *reason = FinishReason::kNone;
  GenerationChunk chunk;
  chunk.id = sampler_.Sample(logits, tokens_);
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
