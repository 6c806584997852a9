// A short generation whose caller waits for the whole reply: the query
// translation and the answerability check, run before an answer by the
// models that serve answers.
//
// Thread-safety: each function may be called from any number of threads.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "inference/engine.h"
#include "inference/generator.h"

namespace ragd::app {

struct ShortReply {
  std::string text;
  // The first token's most likely alternatives, when the request asked for
  // logprobs; empty otherwise.
  std::vector<inference::TokenLogprob> first_top_logprobs;
  // From the generator's last event (the generator overload only).
  inference::GenerationStats stats;
  inference::FinishReason finish_reason{};
};

// A greedy request for one line of at most `max_tokens` after `prompt` (a
// translation, a rewrite): the reply ends at its first newline.
inference::GenerationRequest OneLineRequest(std::vector<inference::TokenId> prompt, int max_tokens);

// Runs `request` on `generator` (batched with the answers it serves, or
// any request that waits for its whole reply) and waits for the reply; gives up after `timeout` (the
// generation is then cancelled), kUnavailable naming `what`.
Result<ShortReply> RunShortGeneration(inference::Generator& generator,
                                      const inference::GenerationRequest& request,
                                      std::chrono::milliseconds timeout, const char* what);

// Runs `request` on `engine` itself, without a scheduler (tests, and
// `ragd eval`'s query translation on the fast model).
Result<ShortReply> RunShortGeneration(inference::Engine& engine, const inference::GenerationRequest& request);

}  // namespace ragd::app
