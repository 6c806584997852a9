// Sampling: greedy, seeds, truncation (top-k, top-p, min-p) checked on the
// support of many draws with fixed seeds, penalties, logit bias, validation;
// and stop strings across token boundaries.
#include "inference/tokenizer/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "tests/inference/tokenizer/tiny_vocab.h"

namespace ragd::inference {
namespace {

using Ids = std::vector<TokenId>;

SamplingOptions Plain(float temperature, uint64_t seed = 42) {
  SamplingOptions o;
  o.temperature = temperature;
  o.top_k = 0;
  o.top_p = 1;
  o.min_p = 0;
  o.seed = seed;
  return o;
}

Sampler Make(const SamplingOptions& o, int vocab) {
  auto s = Sampler::Create(o, vocab);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s.value());
}

// Logits whose softmax (temperature 1) is `probs`.
std::vector<float> FromProbs(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

std::map<TokenId, int> Histogram(Sampler& s, const std::vector<float>& logits, int draws) {
  std::map<TokenId, int> h;
  for (int i = 0; i < draws; ++i) ++h[s.Sample(logits, {})];
  return h;
}

std::set<TokenId> Support(const std::map<TokenId, int>& h) {
  std::set<TokenId> s;
  for (const auto& [id, n] : h) s.insert(id);
  return s;
}

const std::vector<double> kProbs = {0.5, 0.3, 0.15, 0.05};

TEST(SamplerTest, GreedyIsArgmax) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 3);
  auto s = Make(Plain(0), 1000);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> logits(1000);
    for (float& l : logits) l = normal(rng);
    const TokenId argmax =
        static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    EXPECT_EQ(s.Sample(logits, {}), argmax);
  }
}

TEST(SamplerTest, SameSeedSameTokens) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 2);
  std::vector<std::vector<float>> steps(50, std::vector<float>(5000));
  for (auto& l : steps)
    for (float& x : l) x = normal(rng);
  SamplingOptions o;  // defaults: top-k 40, top-p 0.95, min-p 0.05, T 0.8
  o.temperature = 1.5f;
  o.min_p = 0;
  const auto run = [&](uint64_t seed) {
    o.seed = seed;
    auto s = Make(o, 5000);
    Ids out;
    for (const auto& l : steps) out.push_back(s.Sample(l, out));
    return out;
  };
  EXPECT_EQ(run(1234), run(1234));
  EXPECT_NE(run(1234), run(1235));
}

TEST(SamplerTest, UnrestrictedDrawFollowsSoftmax) {
  auto s = Make(Plain(1), 4);
  const auto h = Histogram(s, FromProbs(kProbs), 20000);
  for (size_t i = 0; i < kProbs.size(); ++i) {
    EXPECT_NEAR(h.at(static_cast<TokenId>(i)) / 20000.0, kProbs[i], 0.015) << i;
  }
}

TEST(SamplerTest, TemperatureSharpensAndFlattens) {
  auto cold = Make(Plain(0.3f), 4);
  auto hot = Make(Plain(3.0f), 4);
  const auto hc = Histogram(cold, FromProbs(kProbs), 5000);
  const auto hh = Histogram(hot, FromProbs(kProbs), 5000);
  EXPECT_GT(hc.at(0), 4000);  // p0 ~ 0.84 at T=0.3
  EXPECT_LT(hh.at(0), 2000);  // p0 ~ 0.35 at T=3
  EXPECT_GT(hh.at(3), 500);
}

TEST(SamplerTest, TopKRestrictsSupport) {
  std::vector<float> logits(100);
  for (int i = 0; i < 100; ++i) logits[i] = -0.01f * static_cast<float>((i * 37) % 100);  // a permutation
  SamplingOptions o = Plain(2.0f);
  o.top_k = 3;
  auto s = Make(o, 100);
  // The three largest logits are at the ids where (i*37)%100 is 0, 1, 2.
  EXPECT_EQ(Support(Histogram(s, logits, 3000)), (std::set<TokenId>{0, 73, 46}));
}

// A Gemma-sized vocabulary: the 40 kept are the 40 best by logit, then by
// lower id, wherever they lie; NaN and -inf never enter.
TEST(SamplerTest, TopKOnLargeVocabulary) {
  constexpr int kVocab = 262144;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> low(-3.0f, 0.0f);
  std::vector<float> logits(kVocab);
  for (float& l : logits) l = low(rng);
  for (int i = 0; i < kVocab; i += 97) logits[i] = std::numeric_limits<float>::quiet_NaN();
  for (int i = 5; i < kVocab; i += 89) logits[i] = -std::numeric_limits<float>::infinity();
  std::set<TokenId> want;
  for (int j = 0; j < 39; ++j) {
    const TokenId id = 1 + 6700 * j;  // ids 1 .. 254601
    logits[id] = 2.0f + 0.01f * static_cast<float>(j % 7);
    want.insert(id);
  }
  logits[200003] = logits[150001] = 1.0f;  // a tie for the 40th place: the lower id wins
  want.insert(150001);
  SamplingOptions o = Plain(100.0f);
  o.top_k = 40;
  auto s = Make(o, kVocab);
  EXPECT_EQ(Support(Histogram(s, logits, 4000)), want);
}

TEST(SamplerTest, TopPRestrictsSupport) {
  SamplingOptions o = Plain(1.0f);
  o.top_p = 0.75f;  // 0.5 + 0.3 reaches it
  auto s = Make(o, 4);
  EXPECT_EQ(Support(Histogram(s, FromProbs(kProbs), 3000)), (std::set<TokenId>{0, 1}));
  o.top_p = 0.9f;  // needs the third token
  auto s2 = Make(o, 4);
  EXPECT_EQ(Support(Histogram(s2, FromProbs(kProbs), 3000)), (std::set<TokenId>{0, 1, 2}));
  o.top_p = 0.0f;  // keeps the best token only
  auto s3 = Make(o, 4);
  EXPECT_EQ(Support(Histogram(s3, FromProbs(kProbs), 500)), (std::set<TokenId>{0}));
}

TEST(SamplerTest, TopPOnLargeVocabulary) {
  // 1000 tokens with geometric probabilities: top_p = 0.9 keeps a handful.
  std::vector<float> logits(1000);
  for (int i = 0; i < 1000; ++i) logits[i] = -0.5f * static_cast<float>(i);
  SamplingOptions o = Plain(1.0f);
  o.top_p = 0.9f;
  auto s = Make(o, 1000);
  // p_i ∝ e^{-i/2}: the smallest prefix with mass >= 0.9 has 5 tokens.
  EXPECT_EQ(Support(Histogram(s, logits, 5000)), (std::set<TokenId>{0, 1, 2, 3, 4}));
}

TEST(SamplerTest, MinPRestrictsSupport) {
  SamplingOptions o = Plain(1.0f);
  o.min_p = 0.2f;  // keeps p >= 0.1
  auto s = Make(o, 4);
  EXPECT_EQ(Support(Histogram(s, FromProbs(kProbs), 3000)), (std::set<TokenId>{0, 1, 2}));
  o.min_p = 0.5f;  // keeps p >= 0.25
  auto s2 = Make(o, 4);
  EXPECT_EQ(Support(Histogram(s2, FromProbs(kProbs), 3000)), (std::set<TokenId>{0, 1}));
}

TEST(SamplerTest, RepeatPenalty) {
  SamplingOptions o = Plain(0);
  o.repeat_penalty = 1.2f;
  auto s = Make(o, 3);
  EXPECT_EQ(s.Sample(std::vector<float>{2.0f, 1.9f, 0.0f}, {}), 0);
  EXPECT_EQ(s.Sample(std::vector<float>{2.0f, 1.9f, 0.0f}, Ids{0}), 1);     // 2/1.2 < 1.9
  EXPECT_EQ(s.Sample(std::vector<float>{-1.0f, -1.1f, -5.0f}, Ids{0}), 1);  // -1*1.2 < -1.1
  o.repeat_last_n = 2;
  auto windowed = Make(o, 3);
  EXPECT_EQ(windowed.Sample(std::vector<float>{2.0f, 1.9f, 0.0f}, Ids{0, 2, 2}),
            0);  // 0 is outside the window
  EXPECT_EQ(windowed.Sample(std::vector<float>{2.0f, 1.9f, 0.0f}, Ids{2, 0, 2}), 1);
}

TEST(SamplerTest, PresenceAndFrequencyPenalties) {
  SamplingOptions o = Plain(0);
  o.presence_penalty = 0.6f;
  auto presence = Make(o, 3);
  EXPECT_EQ(presence.Sample(std::vector<float>{2.0f, 1.5f, 1.2f}, Ids{0}), 1);
  o.presence_penalty = 0;
  o.frequency_penalty = 0.5f;
  auto frequency = Make(o, 3);
  // 0: 2 - 2*0.5 = 1.0, 1: 1.5 - 0.5 = 1.0, 2: 1.2
  EXPECT_EQ(frequency.Sample(std::vector<float>{2.0f, 1.5f, 1.2f}, Ids{0, 0, 1}), 2);
  EXPECT_EQ(frequency.Sample(std::vector<float>{2.0f, 1.5f, 1.2f}, Ids{1}), 0);
}

// Penalties and bias are applied without copying the vocabulary: a sampler
// with them draws exactly the tokens that one without them (same seed) draws
// from the logits changed by hand, greedy or not, truncated or not, over a
// large vocabulary with ties and changed logits that rise into the top k.
TEST(SamplerTest, PenaltiesEqualTheChangedLogits) {
  constexpr int kVocab = 5000;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::uniform_int_distribution<TokenId> pick(0, kVocab - 1);
  for (const float temperature : {0.0f, 0.8f}) {
    for (const int top_k : {0, 1, 40}) {
      SamplingOptions o = Plain(temperature, 11);
      o.top_k = top_k;
      o.top_p = 0.95f;
      o.repeat_penalty = 1.3f;
      o.presence_penalty = -1.5f;  // recent tokens can rise
      o.frequency_penalty = 0.25f;
      o.repeat_last_n = 48;
      o.logit_bias = {{pick(rng), 8.0f}, {pick(rng), -100.0f}, {kVocab - 1, 3.0f}};
      SamplingOptions plain = o;
      plain.repeat_penalty = 1;
      plain.presence_penalty = plain.frequency_penalty = 0;
      plain.logit_bias.clear();
      auto with = Make(o, kVocab);
      auto without = Make(plain, kVocab);
      for (int draw = 0; draw < 40; ++draw) {
        std::vector<float> logits(kVocab);
        for (float& x : logits) x = std::round(normal(rng) * 4) / 4;  // many ties
        Ids history;
        for (int i = 0; i < 64; ++i) history.push_back(i % 3 == 0 && i > 0 ? history.back() : pick(rng));
        std::vector<float> changed = logits;
        std::map<TokenId, int> counts;
        for (size_t i = history.size() - 48; i < history.size(); ++i) ++counts[history[i]];
        for (const auto& [id, count] : counts) {
          float& x = changed[id];
          x = x > 0 ? x / o.repeat_penalty : x * o.repeat_penalty;
          x -= static_cast<float>(count) * o.frequency_penalty + o.presence_penalty;
        }
        for (const auto& [id, bias] : o.logit_bias) changed[id] += bias;
        EXPECT_EQ(with.Sample(logits, history), without.Sample(changed, {}))
            << "temperature " << temperature << " top_k " << top_k << " draw " << draw;
      }
    }
  }
}

TEST(SamplerTest, LogitBias) {
  SamplingOptions o = Plain(0);
  o.logit_bias = {{3, 5.0f}};
  auto s = Make(o, 4);
  EXPECT_EQ(s.Sample(FromProbs(kProbs), {}), 3);
  o.logit_bias = {{0, -100.0f}};
  auto ban = Make(o, 4);
  EXPECT_EQ(ban.Sample(FromProbs(kProbs), {}), 1);
  // A banned token is never drawn when sampling either.
  SamplingOptions hot = Plain(2.0f);
  hot.logit_bias = {{0, -100.0f}};
  auto hs = Make(hot, 4);
  EXPECT_EQ(Histogram(hs, FromProbs(kProbs), 2000).count(0), 0u);
}

TEST(SamplerTest, NonFiniteLogits) {
  const float inf = std::numeric_limits<float>::infinity();
  auto g = Make(Plain(0), 3);
  EXPECT_EQ(g.Sample(std::vector<float>{std::nanf(""), 1.0f, 0.5f}, {}), 1);
  auto s = Make(Plain(1), 3);
  EXPECT_EQ(s.Sample(std::vector<float>{-inf, -inf, -inf}, {}), 0);
  EXPECT_EQ(Support(Histogram(s, std::vector<float>{-inf, 0.0f, -inf}, 200)), (std::set<TokenId>{1}));
  // Sampled as greedy: an infinite logit is taken (the first of them), and
  // nothing above -inf gives token 0.
  auto t = Make(Plain(1), 4);
  EXPECT_EQ(Support(Histogram(t, std::vector<float>{1.0f, inf, 0.5f, inf}, 50)), (std::set<TokenId>{1}));
  EXPECT_EQ(t.Sample(std::vector<float>{std::nanf(""), -inf, std::nanf(""), -inf}, {}), 0);
}

TEST(SamplerTest, ValidationNamesTheField) {
  const auto check = [](SamplingOptions o, const std::string& field) {
    Status st = ValidateSamplingOptions(o, 100);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << field;
    EXPECT_NE(st.message().find(field), std::string::npos) << st.message();
    EXPECT_FALSE(Sampler::Create(o, 100).ok());
  };
  SamplingOptions o;
  EXPECT_TRUE(ValidateSamplingOptions(o, 100).ok());
  o.temperature = -1;
  check(o, "temperature");
  o = {};
  o.temperature = std::nanf("");
  check(o, "temperature");
  o = {};
  o.top_k = -1;
  check(o, "top_k");
  o = {};
  o.top_p = 1.5f;
  check(o, "top_p");
  o = {};
  o.min_p = -0.1f;
  check(o, "min_p");
  o = {};
  o.repeat_penalty = 0;
  check(o, "repeat_penalty");
  o = {};
  o.repeat_last_n = -2;
  check(o, "repeat_last_n");
  o = {};
  o.presence_penalty = 3;
  check(o, "presence_penalty");
  o = {};
  o.frequency_penalty = -2.5f;
  check(o, "frequency_penalty");
  o = {};
  o.logit_bias = {{100, 1.0f}};
  check(o, "logit_bias[100]");
  o = {};
  o.logit_bias = {{5, 101.0f}};
  check(o, "logit_bias[5]");
}

TEST(StopMatcherTest, HoldsBackPossibleStartAndCuts) {
  auto m = StopMatcher::Create({"</s>", "STOP"});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->Push("Hello <"), "Hello ");
  EXPECT_EQ(m->Push("/"), "");
  EXPECT_FALSE(m->stopped());
  EXPECT_EQ(m->Push("s> more"), "");
  EXPECT_TRUE(m->stopped());
  EXPECT_EQ(m->matched(), "</s>");
  EXPECT_EQ(m->Push("anything"), "");
  EXPECT_EQ(m->Flush(), "");
}

TEST(StopMatcherTest, ReleasesWhenNotAStop) {
  auto m = StopMatcher::Create({"</s>"});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->Push("a</"), "a");
  EXPECT_EQ(m->Push("b"), "</b");
  EXPECT_EQ(m->Push("x<"), "x");
  EXPECT_EQ(m->Flush(), "<");
  EXPECT_FALSE(m->stopped());
}

TEST(StopMatcherTest, EarliestStopWinsAndUtf8Kept) {
  auto m = StopMatcher::Create({"world", "o w", "\xC3\xA9!"});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->Push("hello world"), "hell");
  EXPECT_EQ(m->matched(), "o w");
  auto u = StopMatcher::Create({"\xC3\xA9!"});
  EXPECT_EQ(u->Push("caf\xC3\xA9"), "caf");
  EXPECT_EQ(u->Push("!"), "");
  EXPECT_TRUE(u->stopped());
  EXPECT_EQ(StopMatcher::Create({"a", ""}).status().code(), StatusCode::kInvalidArgument);
  StopMatcher none;
  EXPECT_EQ(none.Push("text"), "text");
}

TEST(StopMatcherTest, StopAcrossTokenBoundaries) {
  // "hello world" is two tokens, "hello" and "▁world"; the stop "lo wo" spans both.
  auto tok = tiny::MakeTokenizer();
  ASSERT_NE(tok, nullptr);
  auto ids = tok->Encode("hello world, hello");
  ASSERT_TRUE(ids.ok());
  auto m = StopMatcher::Create({"lo wo"});
  ASSERT_TRUE(m.ok());
  IncrementalDecoder dec(*tok);
  std::string out;
  size_t consumed = 0;
  for (TokenId id : *ids) {
    ++consumed;
    out += m->Push(*dec.Push(id));
    if (m->stopped()) break;
  }
  EXPECT_TRUE(m->stopped());
  EXPECT_EQ(out, "hel");
  EXPECT_EQ(consumed, 2u);
}

// Log-probabilities are the log-softmax of the raw logits: they sum to one,
// the alternatives come best first (ties by lower id), NaN and -inf count
// as impossible.
TEST(TokenLogprobsTest, LogSoftmaxOfTheRawLogits) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {1.0f, 3.0f, nan, 3.0f, -inf, 0.5f};
  std::vector<TokenLogprob> top;
  const float chosen = TokenLogprobs(logits, 5, 3, &top);
  double z = 0;
  for (float v : {1.0f, 3.0f, 3.0f, 0.5f}) z += std::exp(v);
  EXPECT_NEAR(chosen, 0.5 - std::log(z), 1e-5);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].id, 1);
  EXPECT_EQ(top[1].id, 3);
  EXPECT_EQ(top[2].id, 0);
  EXPECT_NEAR(top[0].logprob, 3.0 - std::log(z), 1e-5);
  EXPECT_EQ(TokenLogprobs(logits, 2, 0, &top), -inf);  // NaN
  EXPECT_TRUE(top.empty());
  EXPECT_EQ(TokenLogprobs(logits, 4, 0, &top), -inf);
  double mass = 0;
  for (TokenId id = 0; id < 6; ++id)
    mass += std::exp(static_cast<double>(TokenLogprobs(logits, id, 0, &top)));
  EXPECT_NEAR(mass, 1.0, 1e-5);
}

}  // namespace
}  // namespace ragd::inference
