// Whether the retrieved sources answer a question, asked of the answer
// model itself before it answers. Told in its rules to say when the
// documents do not say, Qwen2.5-Coder-1.5B said so for plain questions its
// first source answered (7 of the 52 answerable questions of
// tests/data/rag_eval.jsonl) and still answered half of the 10 unanswerable
// ones from loosely related passages. Asked instead "Is the answer to this
// question stated in the sources above?", its probability of "yes" against
// "no" in the first token separates the two far better: under 0.6 for 9 of
// the 10 unanswerable questions and for 2 of the 52 answerable ones. So the
// answer's rules no longer ask the model to abstain; this check does.
//
// The check is the RAG conversation up to the question (rag_prompt.h) with
// another closing line, so the prefix cache holds the sources when the
// answer follows; it costs one prefill of the closing line and one decoding
// step more than the answer alone.
//
// Thread-safety: an AnswerabilityJudge may be called from any number of
// threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "inference/engine.h"
#include "inference/generator.h"

namespace ragd::app {

// Runs an answerability request (AnswerabilityRequest) and gives the share
// of "yes" in its first token (AnswerabilityScore), in [0, 1].
using AnswerabilityJudge = std::function<Result<double>(const inference::GenerationRequest& request)>;

// One greedy token with its most likely alternatives, for `prompt` (the
// BuildAnswerabilityConversation in the model's chat template).
inference::GenerationRequest AnswerabilityRequest(std::vector<inference::TokenId> prompt);

// P(yes) / (P(yes) + P(no)) over `top` (a first token's alternatives, read
// through `tokenizer`: "Yes", "yes", " no", ...); -1 when neither appears
// (the judges then fail, and the model answers unchecked).
double AnswerabilityScore(const inference::Tokenizer& tokenizer,
                          const std::vector<inference::TokenLogprob>& top);

// A judge running on `generator` (the answer model's, `engine` its
// vocabulary), giving up after `timeout`. `prepare` may set the request's
// cache scope and shared prefix before it is submitted.
AnswerabilityJudge JudgeWith(const inference::Engine& engine, inference::Generator& generator,
                             std::chrono::milliseconds timeout,
                             std::function<void(inference::GenerationRequest&)> prepare = {});

// Whether the check is asked of `engine`: a model tuned to follow
// instructions with at least a billion parameters. Qwen2.5-Coder-0.5B's
// "yes" fell under 0.6 for every one of 20 answerable questions of the
// serve bench (so it would always abstain); the 1.5B's figures are above.
bool AnswerabilityCheckSeparates(const inference::Engine& engine);

// A judge running `engine` itself, without a scheduler (tests).
AnswerabilityJudge JudgeWithEngine(inference::Engine& engine);

}  // namespace ragd::app
