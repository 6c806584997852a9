// The wire to an upstream server: the completions request ragd sends and the
// reading of its Server-Sent Events answer, however the bytes are split.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/upstream/completion_stream.h"

namespace ragd::app::upstream {
namespace {

const std::string kAnswer =
    "data: {\"choices\":[{\"index\":0,\"text\":\"Hel\",\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"text\":\"lo \\u00e9\",\"finish_reason\":null}]}\r\n\r\n"
    ": a comment line\n\n"
    "data: {\"choices\":[{\"index\":0,\"text\":\"!\",\"finish_reason\":\"length\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}\n\n"
    "data: [DONE]\n\n";

class SplitTest : public ::testing::TestWithParam<size_t> {};

TEST_P(SplitTest, SameEventsHoweverTheBytesArrive) {
  CompletionStream stream;
  std::vector<std::string> deltas;
  const auto sink = [&](const std::string& t) {
    deltas.push_back(t);
    return true;
  };
  for (size_t i = 0; i < kAnswer.size(); i += GetParam())
    ASSERT_TRUE(stream.Feed(std::string_view(kAnswer).substr(i, GetParam()), sink));
  EXPECT_EQ(deltas, (std::vector<std::string>{"Hel", "lo \xc3\xa9", "!"}));
  EXPECT_TRUE(stream.finished());
  EXPECT_TRUE(stream.done());
  EXPECT_EQ(stream.finish_reason(), "length");
  ASSERT_TRUE(stream.usage().has_value());
  EXPECT_EQ(stream.usage()->prompt_tokens, 12);
  EXPECT_EQ(stream.usage()->completion_tokens, 3);
  EXPECT_EQ(stream.error(), "");
}

INSTANTIATE_TEST_SUITE_P(ChunkSizes, SplitTest, ::testing::Values(1, 2, 7, 64, 100000));

TEST(CompletionStreamTest, ErrorEventStopsWithItsMessageAndStatus) {
  CompletionStream stream;
  const auto sink = [](const std::string&) { return true; };
  EXPECT_FALSE(stream.Feed(
      "data: {\"error\":{\"code\":400,\"type\":\"exceed_context_size_error\",\"message\":\"too long\"}}\n\n",
      sink));
  EXPECT_EQ(stream.error(), "too long");
  EXPECT_EQ(stream.error_status(), 400);
  EXPECT_FALSE(stream.finished());
}

TEST(CompletionStreamTest, MalformedEventIsAnError) {
  CompletionStream stream;
  EXPECT_FALSE(stream.Feed("data: {not json\n\n", [](const std::string&) { return true; }));
  EXPECT_NE(stream.error(), "");
}

TEST(CompletionStreamTest, SinkReturningFalseStops) {
  CompletionStream stream;
  int calls = 0;
  EXPECT_FALSE(stream.Feed(kAnswer, [&](const std::string&) { return ++calls < 2; }));
  EXPECT_EQ(calls, 2);
}

TEST(CompletionBodyTest, PromptIdsSamplingAndUsageRequested) {
  inference::GenerationRequest r;
  r.prompt = {1, 2, 3};
  r.max_tokens = 7;
  r.sampling.temperature = 0;
  r.sampling.seed = 42;
  r.stop = {"\n\n"};
  const auto j = nlohmann::json::parse(CompletionBody("qwen", r));
  EXPECT_EQ(j["model"], "qwen");
  EXPECT_EQ(j["prompt"], nlohmann::json::array({1, 2, 3}));
  EXPECT_EQ(j["max_tokens"], 7);
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["stop"], nlohmann::json::array({"\n\n"}));
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  // Beyond OpenAI's fields, only what differs from the shared defaults.
  EXPECT_FALSE(j.contains("top_k"));
  EXPECT_FALSE(j.contains("logit_bias"));
  r.sampling.top_k = 5;
  r.sampling.logit_bias[9] = -100;
  const auto k = nlohmann::json::parse(CompletionBody("qwen", r));
  EXPECT_EQ(k["top_k"], 5);
  EXPECT_EQ(k["logit_bias"]["9"], -100);
}

}  // namespace
}  // namespace ragd::app::upstream
