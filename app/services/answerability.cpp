#include "app/services/answerability.h"

#include <cmath>
#include <string>
#include <utility>

#include "app/services/short_generation.h"
#include "common/text.h"
#include "inference/tokenizer/sampler.h"

namespace ragd::app {

inference::GenerationRequest AnswerabilityRequest(std::vector<inference::TokenId> prompt) {
  inference::GenerationRequest request;
  request.prompt = std::move(prompt);
  request.sampling.temperature = 0;
  request.max_tokens = 1;
  request.logprobs = inference::kMaxTopLogprobs;
  return request;
}

double AnswerabilityScore(const inference::Tokenizer& tokenizer,
                          const std::vector<inference::TokenLogprob>& top) {
  double yes = 0, no = 0;
  for (const inference::TokenLogprob& t : top) {
    const inference::TokenId id[] = {t.id};
    auto text = tokenizer.Decode(id);
    if (!text.ok()) continue;
    const std::string word = AsciiLower(Trim(*text));
    if (word == "yes") yes += std::exp(static_cast<double>(t.logprob));
    if (word == "no") no += std::exp(static_cast<double>(t.logprob));
  }
  return yes + no > 0 ? yes / (yes + no) : -1;
}

namespace {

Result<double> Judged(const inference::Tokenizer& tokenizer, const Result<ShortReply>& reply) {
  if (!reply.ok()) return reply.status();
  const double score = AnswerabilityScore(tokenizer, reply->first_top_logprobs);
  if (score < 0) return Status::Unavailable("the answerability check replied neither yes nor no");
  return score;
}

}  // namespace

AnswerabilityJudge JudgeWith(const inference::Engine& engine, inference::Generator& generator,
                             std::chrono::milliseconds timeout,
                             std::function<void(inference::GenerationRequest&)> prepare) {
  return [&engine, &generator, timeout,
          prepare = std::move(prepare)](const inference::GenerationRequest& request) -> Result<double> {
    inference::GenerationRequest r = request;
    if (prepare) prepare(r);
    return Judged(engine.tokenizer(), RunShortGeneration(generator, r, timeout, "the answerability check"));
  };
}

bool AnswerabilityCheckSeparates(const inference::Engine& engine) {
  constexpr int64_t kLeastParameters = 1'000'000'000;
  return engine.instruction_tuned() && engine.info().parameters >= kLeastParameters;
}

AnswerabilityJudge JudgeWithEngine(inference::Engine& engine) {
  return [&engine](const inference::GenerationRequest& request) -> Result<double> {
    return Judged(engine.tokenizer(), RunShortGeneration(engine, request));
  };
}

}  // namespace ragd::app
