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
  return yes + no > 0 ? yes / (yes + no) : 0.5;
}

AnswerabilityJudge JudgeWith(const inference::Engine& engine, inference::Generator& generator,
                             std::chrono::milliseconds timeout,
                             std::function<void(inference::GenerationRequest&)> prepare) {
  return [&engine, &generator, timeout,
          prepare = std::move(prepare)](const inference::GenerationRequest& request) -> Result<double> {
    inference::GenerationRequest r = request;
    if (prepare) prepare(r);
    auto reply = RunShortGeneration(generator, r, timeout, "the answerability check");
    if (!reply.ok()) return reply.status();
    return AnswerabilityScore(engine.tokenizer(), reply->first_top_logprobs);
  };
}

AnswerabilityJudge JudgeWithEngine(inference::Engine& engine) {
  return [&engine](const inference::GenerationRequest& request) -> Result<double> {
    auto reply = RunShortGeneration(engine, request);
    if (!reply.ok()) return reply.status();
    return AnswerabilityScore(engine.tokenizer(), reply->first_top_logprobs);
  };
}

}  // namespace ragd::app
