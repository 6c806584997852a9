// The answerability check with the real answer model (Qwen2.5-Coder 1.5B,
// the default): the share of "yes" is high when a source states the answer
// and low when the sources are about something else, in English and in
// another language; and the score reads "yes"/"no" from a first token's
// alternatives however the vocabulary spells them.
#include "app/services/answerability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/services/rag_prompt.h"
#include "inference/tokenizer/sampler.h"
#include "tests/support/test_engine.h"
#include "tests/support/test_paths.h"

namespace ragd::app {
namespace {

std::unique_ptr<inference::Engine> LoadAnswerModel() {
  return testing::LoadTestEngine(testing::QwenModelPath("1.5b"), 1024);
}

Source Passage(int n, const char* title, const char* text) {
  Source s;
  s.n = n;
  s.hit.title = title;
  s.hit.text = text;
  return s;
}

const std::vector<Source>& Sources() {
  static const std::vector<Source> sources = {
      Passage(1, "Backups",
              "Stop the server, then copy the whole data folder (by default /var/lib/ragd) to the backup "
              "disk. Restoring is copying it back before the server starts."),
      Passage(2, "Quotas",
              "Every user has a budget of 200,000 tokens per day unless an administrator sets another "
              "with `ragd user set-quota`."),
  };
  return sources;
}

double Check(inference::Engine& engine, const std::string& question) {
  auto prompt = engine.FormatChat(BuildAnswerabilityConversation(question, Sources()));
  EXPECT_TRUE(prompt.ok());
  auto score = JudgeWithEngine(engine)(AnswerabilityRequest(std::move(prompt).value()));
  EXPECT_TRUE(score.ok()) << score.status().ToString();
  return score.ok() ? *score : -1;
}

TEST(Answerability, HighWhenASourceStatesTheAnswerLowWhenNone) {
  auto engine = LoadAnswerModel();
  ASSERT_NE(engine, nullptr);
  const double stated = Check(*engine, "How many tokens may a user spend per day by default?");
  const double stated_pt = Check(*engine, "Como faço uma cópia de segurança dos dados?");
  const double absent = Check(*engine, "Which GPU does ragd recommend?");
  const double absent_de = Check(*engine, "Wie verbinde ich ragd mit einem LDAP-Verzeichnis?");
  EXPECT_GT(stated, 0.55);
  EXPECT_GT(stated_pt, 0.55);
  EXPECT_LT(absent, 0.55);
  EXPECT_LT(absent_de, 0.55);
  std::printf("answerability: stated %.3f, stated (pt) %.3f, absent %.3f, absent (de) %.3f\n", stated,
              stated_pt, absent, absent_de);
}

// The 0.5B's "yes" does not separate answerable questions from the others:
// it would abstain on all of them. A base model is not asked at all.
TEST(Answerability, AskedOnlyOfAnInstructionTunedModelOfABillionParameters) {
  auto engine = LoadAnswerModel();
  ASSERT_NE(engine, nullptr);
  EXPECT_TRUE(AnswerabilityCheckSeparates(*engine));
  auto fast = testing::LoadTestEngine(testing::QwenModelPath("0.5b"), 256);
  ASSERT_NE(fast, nullptr);
  EXPECT_TRUE(fast->instruction_tuned());
  EXPECT_FALSE(AnswerabilityCheckSeparates(*fast));
}

TEST(Answerability, ScoreReadsYesAndNoInAnySpelling) {
  auto engine = LoadAnswerModel();
  ASSERT_NE(engine, nullptr);
  const inference::Tokenizer& tok = engine->tokenizer();
  const auto id = [&](const char* text) {
    auto ids = tok.Encode(text);
    EXPECT_TRUE(ids.ok() && ids->size() == 1) << text;
    return ids.ok() && !ids->empty() ? ids->front() : inference::TokenId{-1};
  };
  const auto lp = [](double p) { return static_cast<float>(std::log(p)); };
  // 0.4 + 0.2 yes against 0.1 + 0.1 no; "The" is neither.
  const std::vector<inference::TokenLogprob> top = {{id("Yes"), lp(0.4)},
                                                    {id(" yes"), lp(0.2)},
                                                    {id("No"), lp(0.1)},
                                                    {id("no"), lp(0.1)},
                                                    {id("The"), lp(0.2)}};
  EXPECT_NEAR(AnswerabilityScore(tok, top), 0.75, 1e-5);
  EXPECT_NEAR(AnswerabilityScore(tok, {{id("No"), lp(0.9)}}), 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(AnswerabilityScore(tok, {{id("The"), lp(0.9)}}), -1);  // neither: no verdict
  EXPECT_DOUBLE_EQ(AnswerabilityScore(tok, {}), -1);
}

}  // namespace
}  // namespace ragd::app
