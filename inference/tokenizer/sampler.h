// Choosing the next token from the logits, and cutting output at stop strings.
//
// Sampler order: repetition penalties -> logit bias -> (temperature 0: argmax)
// -> top-k -> top-p -> min-p -> temperature -> draw with the seeded RNG.
// top-p and min-p use the probabilities at temperature 1 (as llama.cpp does);
// the temperature only reshapes the draw among the tokens that survive.
//
// Thread-safety: a Sampler and a StopMatcher are per-request state; use each
// from one thread at a time. Validation functions are pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

struct SamplingOptions {
  float temperature = 0.8f;        // 0 = greedy (argmax); valid range [0, 100]
  int top_k = 40;                  // keep the k most likely tokens; 0 = off
  float top_p = 0.95f;             // keep the smallest set with mass >= top_p; 1 = off; range [0, 1]
  float min_p = 0.05f;             // drop tokens with p < min_p * p_max; 0 = off; range [0, 1]
  float repeat_penalty = 1.0f;     // CTRL penalty on recent tokens (>1 discourages); 1 = off; range (0, 10]
  int repeat_last_n = 64;          // how many recent history tokens the penalties see; 0 = none, -1 = all
  float presence_penalty = 0.0f;   // subtracted once from a recent token's logit; range [-2, 2]
  float frequency_penalty = 0.0f;  // subtracted per occurrence of a recent token; range [-2, 2]
  std::optional<uint64_t> seed;    // RNG seed; same seed + same logits = same tokens; none = random
  std::map<TokenId, float> logit_bias;  // added to a token's logit; ids < vocab, values in [-100, 100]
};

// A token's log-probability under the model: log-softmax of its raw logit
// (before penalties, bias, temperature and any grammar), as OpenAI and vLLM
// report them.
struct TokenLogprob {
  TokenId id = -1;
  float logprob = 0;
};
constexpr int kMaxTopLogprobs = 20;

// The log-probability of `chosen` and, in *top, the `top_n` most likely
// tokens (best first; ties by lower id). NaN logits count as -inf.
float TokenLogprobs(std::span<const float> logits, TokenId chosen, int top_n, std::vector<TokenLogprob>* top);

// kInvalidArgument naming the first offending field ("top_p must be in [0, 1]").
Status ValidateSamplingOptions(const SamplingOptions& options, int vocab_size);

class Sampler {
 public:
  // Validates `options` (see ValidateSamplingOptions) for a vocabulary of
  // `vocab_size` tokens.
  static Result<Sampler> Create(const SamplingOptions& options, int vocab_size);

  // The next token. `logits` has vocab_size entries (NaN counts as -inf).
  // `history` is what the penalties look at, oldest first: the generated
  // tokens, optionally preceded by the prompt; only the last repeat_last_n
  // are used. Never fails: with every logit -inf, returns the lowest id.
  TokenId Sample(std::span<const float> logits, std::span<const TokenId> history);

  const SamplingOptions& options() const { return options_; }

  // A token still in the running (public for the comparator; not API).
  struct Candidate {
    float logit;
    TokenId id;
    float p;  // e^(logit - max logit), then the draw weight
  };

 private:
  Sampler(const SamplingOptions& options, int vocab_size);
  double Uniform();  // in [0, 1)
  // A logit the penalties or the bias changed: the value to use instead.
  struct Changed {
    TokenId id;
    float logit;
  };
  void ChangeLogits(const float* logits, size_t n, std::span<const TokenId> history);
  // candidates_ = the k best of the n logits with changed_ in their place.
  void KeepBest(const float* logits, size_t n, size_t k);

  SamplingOptions options_;
  int vocab_size_;
  std::mt19937_64 rng_;
  std::vector<Changed> changed_;  // by id
  std::vector<TokenId> recent_;   // the penalties' window, sorted
  std::vector<Candidate> candidates_;
};

// Cuts generated text at the first occurrence of any stop string. Push() text
// deltas as they are decoded; it returns what can be sent now, holding back a
// tail that might be the start of a stop string. Once a stop string is seen,
// stopped() is true, the output ends just before it, and later Push() calls
// return "". At the end of generation, Flush() returns the held-back tail.
// Text is split only at the start of a possible stop string, so valid UTF-8
// in gives valid UTF-8 out.
class StopMatcher {
 public:
  // kInvalidArgument for an empty stop string ("stop[1] is empty").
  static Result<StopMatcher> Create(std::vector<std::string> stops);
  StopMatcher() = default;  // no stop strings: text passes straight through

  std::string Push(std::string_view text);
  std::string Flush();
  bool stopped() const { return stopped_; }
  // The stop string that matched, or "" while not stopped.
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace ragd::inference
