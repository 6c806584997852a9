// The engine API on the real Gemma 3 270M model: generation, finish reasons,
// stop strings, cancellation, counts, and every bad input as an error value.
#include "inference/engine.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/inference/model/real_model.h"

namespace ragd::inference {
namespace {

Engine* Shared() {
  static std::unique_ptr<Engine> engine = real_model::LoadEngine(64);
  return engine.get();
}

std::vector<TokenId> Prompt(Engine& e, const std::string& text) {
  auto ids = e.tokenizer().Encode(text);
  EXPECT_TRUE(ids.ok());
  std::vector<TokenId> p = {e.tokenizer().bos_id()};
  p.insert(p.end(), ids->begin(), ids->end());
  return p;
}

GenerationRequest Greedy(std::vector<TokenId> prompt, int max_tokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

// Runs to the end; returns the concatenated text.
std::string RunAll(Generation& g, int* chunks = nullptr) {
  std::string text;
  int n = 0;
  while (true) {
    auto c = g.Next();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok() || !*c) break;
    text += (*c)->text;
    ++n;
  }
  if (chunks) *chunks = n;
  return text;
}

TEST(Engine, GeneratesUntilMaxTokens) {
  Engine* e = Shared();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->context_length(), 64);
  EXPECT_EQ(e->architecture(), "gemma3");
  auto g = e->Start(Greedy(Prompt(*e, "The capital of France is"), 8));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  int chunks = 0;
  const std::string text = RunAll(**g, &chunks);
  EXPECT_EQ(chunks, 8);
  EXPECT_EQ((*g)->finish_reason(), FinishReason::kLength);
  EXPECT_EQ((*g)->stats().prompt_tokens, 6);
  EXPECT_EQ((*g)->stats().completion_tokens, 8);
  EXPECT_GT((*g)->stats().prompt_ms, 0);
  EXPECT_GT((*g)->stats().decode_ms, 0);
  auto decoded = e->tokenizer().Decode((*g)->completion());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(text, *decoded);
  EXPECT_FALSE(text.empty());
  // Greedy is deterministic.
  auto again = e->Start(Greedy(Prompt(*e, "The capital of France is"), 8));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(RunAll(**again), text);
  auto next = (*g)->Next();  // finished: stays finished
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
}

TEST(Engine, StopStringCutsTheOutput) {
  Engine* e = Shared();
  ASSERT_NE(e, nullptr);
  auto full = e->Start(Greedy(Prompt(*e, "Once upon a time, there was a little"), 12));
  ASSERT_TRUE(full.ok());
  const std::string text = RunAll(**full);
  ASSERT_GT(text.size(), 6u);
  // Stop on a piece from the middle of the greedy output.
  const std::string stop = text.substr(text.size() / 2, 3);
  GenerationRequest r = Greedy(Prompt(*e, "Once upon a time, there was a little"), 12);
  r.stop = {stop};
  auto cut = e->Start(r);
  ASSERT_TRUE(cut.ok());
  const std::string got = RunAll(**cut);
  EXPECT_EQ(got, text.substr(0, text.find(stop)));
  EXPECT_EQ((*cut)->finish_reason(), FinishReason::kStop);
}

TEST(Engine, CancelStopsTheGeneration) {
  Engine* e = Shared();
  ASSERT_NE(e, nullptr);
  auto g = e->Start(Greedy(Prompt(*e, "One, two, three,"), 30));
  ASSERT_TRUE(g.ok());
  CancelHandle h = (*g)->cancel_handle();
  ASSERT_TRUE((*g)->Next().ok());
  ASSERT_TRUE((*g)->Next().ok());
  h.Cancel();
  auto c = (*g)->Next();
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->has_value());
  EXPECT_EQ((*g)->finish_reason(), FinishReason::kCancelled);
  EXPECT_EQ((*g)->stats().completion_tokens, 2);
  EXPECT_EQ(FinishReasonName(FinishReason::kCancelled), "cancelled");
}

TEST(Engine, ContextLimitEndsWithLength) {
  Engine* e = Shared();
  ASSERT_NE(e, nullptr);
  std::vector<TokenId> prompt = Prompt(*e, "a b c d e f g h i j k l m n o p q r s t u v w x y z");
  prompt.resize(60);  // pad with repeats of real tokens
  for (size_t i = 27; i < 60; ++i) prompt[i] = prompt[i - 26];
  auto g = e->Start(Greedy(prompt, 100));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  RunAll(**g);
  EXPECT_EQ((*g)->stats().completion_tokens, 5);  // 64 - 60 + 1: the last one is sampled, never fed
  EXPECT_EQ((*g)->finish_reason(), FinishReason::kLength);
}

TEST(Engine, BadInputIsAnErrorValue) {
  Engine* e = Shared();
  ASSERT_NE(e, nullptr);
  auto empty = e->Start(Greedy({}, 4));
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);

  auto too_long = e->Start(Greedy(std::vector<TokenId>(65, 2), 4));
  EXPECT_EQ(too_long.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(too_long.status().message().find("65"), std::string::npos) << too_long.status().message();
  EXPECT_NE(too_long.status().message().find("64"), std::string::npos) << too_long.status().message();

  for (TokenId bad : {262144, -1, 1 << 30}) {
    auto r = e->Start(Greedy({2, 100, bad}, 4));
    EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange) << bad;
    EXPECT_NE(r.status().message().find(std::to_string(bad)), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(e->Start(Greedy({2, 100}, 0)).status().code(), StatusCode::kInvalidArgument);
  GenerationRequest bad_sampling = Greedy({2, 100}, 4);
  bad_sampling.sampling.top_p = 2;
  EXPECT_EQ(e->Start(bad_sampling).status().code(), StatusCode::kInvalidArgument);
  GenerationRequest bad_stop = Greedy({2, 100}, 4);
  bad_stop.stop = {""};
  EXPECT_EQ(e->Start(bad_stop).status().code(), StatusCode::kInvalidArgument);
}

TEST(Engine, LoadErrors) {
  EngineOptions missing;
  missing.model_path = "/nonexistent/model.gguf";
  EXPECT_FALSE(Engine::Load(missing).ok());
  EngineOptions too_long;
  too_long.model_path = real_model::ModelPath();
  too_long.context_length = 1 << 20;
  auto r = Engine::Load(too_long);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("32768"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace ragd::inference
