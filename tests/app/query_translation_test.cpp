// The query translation with the real fast model (Qwen2.5-Coder 0.5B,
// greedy): questions in the four other languages of the labelled set come
// back as English questions, not answers, and through the batching
// scheduler as through the engine alone.
#include "app/services/query_translation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <vector>

#include "inference/generator.h"
#include "inference/scheduler.h"
#include "tests/support/test_engine.h"
#include "tests/support/test_paths.h"

namespace ragd::app {
namespace {

std::unique_ptr<inference::Engine> Load(const std::string& path) {
  return testing::LoadTestEngine(path, 512);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

struct Case {
  const char* question;
  std::vector<const char*> words;  // the English words the translation must hold
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"Qual é o limite padrão de requisições por minuto de cada usuário?", {"requests", "minute"}},
      {"Quelle est la taille maximale d'un document accepté ?", {"maximum", "document"}},
      {"¿Cómo creo un usuario nuevo con la API?", {"create", "user"}},
      {"Wie heißt das Cookie der Browser-Sitzung?", {"cookie", "session"}},
  };
  return cases;
}

void ExpectTranslation(const Case& c, const Result<std::string>& got) {
  ASSERT_TRUE(got.ok()) << c.question << ": " << got.status().ToString();
  const std::string english = Lower(*got);
  for (const char* word : c.words)
    EXPECT_NE(english.find(word), std::string::npos) << c.question << " -> " << *got;
  EXPECT_EQ(got->find('\n'), std::string::npos) << *got;
  EXPECT_EQ(got->back(), '?') << c.question << " -> " << *got << " (an answer, not a question)";
}

TEST(QueryTranslation, TheFastModelTranslatesQuestionsIntoEnglish) {
  auto engine = Load(ragd::testing::QwenModelPath("0.5b"));
  ASSERT_TRUE(engine);
  const Translator translate = TranslateWithEngine(*engine);
  for (const Case& c : Cases()) ExpectTranslation(c, translate(c.question));
}

TEST(QueryTranslation, ThroughTheSchedulerAsThroughTheEngine) {
  auto engine = Load(ragd::testing::QwenModelPath("0.5b"));
  ASSERT_TRUE(engine);
  inference::Scheduler scheduler(*engine, inference::SchedulerOptions());
  inference::LocalGenerator generator(scheduler);
  const Translator translate = TranslateWith(*engine, generator, std::chrono::seconds(60));
  const Translator alone = TranslateWithEngine(*engine);
  for (const Case& c : Cases()) {
    auto got = translate(c.question);
    ExpectTranslation(c, got);
    EXPECT_EQ(*got, *alone(c.question));  // greedy: the same words
  }
  // Given no time, it gives up (and the request is cancelled), rather than
  // holding the answer back.
  const Translator hurried = TranslateWith(*engine, generator, std::chrono::milliseconds(0));
  EXPECT_EQ(hurried(Cases()[0].question).status().code(), StatusCode::kUnavailable);
}

TEST(QueryTranslation, RepliesAreCleaned) {
  EXPECT_EQ(CleanTranslation("  \"What is the port?\"  \nmore"), "What is the port?");
  EXPECT_EQ(CleanTranslation("'Why?'"), "Why?");
  EXPECT_EQ(CleanTranslation("\"unbalanced"), "\"unbalanced");
  EXPECT_EQ(CleanTranslation(" \n"), "");
}

}  // namespace
}  // namespace ragd::app
