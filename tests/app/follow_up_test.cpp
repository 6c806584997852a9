// The follow-up rewrite: which questions are rewritten, what replies are
// accepted (a generator that replies with set text), and the real answer
// model (Qwen2.5-Coder 1.5B, greedy) rewriting follow-ups that are in none
// of the labelled sets.
#include "app/services/follow_up.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "app/services/rag_prompt.h"
#include "inference/generator.h"
#include "inference/scheduler.h"
#include "tests/support/test_engine.h"
#include "tests/support/test_paths.h"

namespace ragd::app {
namespace {

using History = std::vector<inference::ChatMessage>;

History After(const std::string& question, const std::string& answer) {
  return {{"user", question}, {"assistant", answer}};
}

std::unique_ptr<inference::Engine> Load(const std::string& path) {
  return testing::LoadTestEngine(path, 512);
}

// Replies to every request with `reply`, as one token.
class ReplyingGenerator final : public inference::Generator {
 public:
  std::string reply;
  std::vector<inference::GenerationRequest> requests;

  Result<inference::CancelHandle> Submit(const inference::GenerationRequest& request,
                                         inference::SchedulerCallback callback) override {
    requests.push_back(request);
    inference::SchedulerEvent token;
    token.text = reply;
    callback(token);
    inference::SchedulerEvent done;
    done.kind = inference::SchedulerEvent::Kind::kDone;
    callback(done);
    return inference::CancelHandle();
  }
  size_t waiting() const override { return 0; }
  Status Health() const override { return Status::Ok(); }
};

TEST(FollowUp, OnlyShortQuestionsAfterAnEarlierQuestionMayFollowUp) {
  const History earlier = After("Which port does ragd listen on?", "8080 [1].");
  EXPECT_TRUE(MayFollowUp(earlier, "And its default?", kRewriteMaxWords));
  EXPECT_FALSE(MayFollowUp({}, "And its default?", kRewriteMaxWords));
  EXPECT_FALSE(MayFollowUp({{"assistant", "Hello."}}, "And its default?", kRewriteMaxWords));
  EXPECT_TRUE(MayFollowUp(earlier, "one two three four five six", 6));
  EXPECT_FALSE(MayFollowUp(earlier, "one two three four five six seven", 6));
}

class FollowUpReplies : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = Load(ragd::testing::QwenModelPath("0.5b"));  // its tokenizer and chat template only
    ASSERT_TRUE(engine_);
  }
  Result<std::string> Rewrite(const std::string& reply, const History& history, const std::string& question) {
    generator_.reply = reply;
    return RewriteWith(*engine_, generator_, std::chrono::seconds(5), /*cache_scope=*/7)(history, question);
  }

  std::unique_ptr<inference::Engine> engine_;
  ReplyingGenerator generator_;
};

TEST_F(FollowUpReplies, AcceptsAStandaloneQuestionInTheConversationsLanguage) {
  const History pt = After("Qual é o limite padrão de requisições por minuto de cada usuário?", "60 [1].");
  auto got =
      Rewrite(" \"Qual é o limite padrão de tokens por minuto de cada usuário?\"\n", pt, "E o de tokens?");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "Qual é o limite padrão de tokens por minuto de cada usuário?");
  ASSERT_EQ(generator_.requests.size(), 1u);
  EXPECT_EQ(generator_.requests[0].cache_scope, 7u);
  EXPECT_EQ(generator_.requests[0].sampling.temperature, 0);
}

TEST_F(FollowUpReplies, RefusesAnEmptyReplyAnotherLanguageOrALostName) {
  const History de = After("Wie heißt das Cookie der Browser-Sitzung?", "ragd_session [1].");
  EXPECT_FALSE(Rewrite("  \n", de, "Und wie lange gilt es?").ok());
  EXPECT_FALSE(Rewrite("How long is the browser session cookie valid?", de, "Und wie lange gilt es?").ok());
  EXPECT_TRUE(Rewrite("Wie lange gilt das Cookie der Browser-Sitzung?", de, "Und wie lange gilt es?").ok());

  // The follow-up names /healthz; a rewrite about the earlier route is refused.
  const History fr = After("Quelle route indique si le serveur est prêt ?", "/readyz [1].");
  const std::string question = "Et que répond /healthz pendant le chargement des modèles ?";
  EXPECT_FALSE(
      Rewrite("Quelle route indique si le serveur est prêt pendant le chargement ?", fr, question).ok());
  EXPECT_TRUE(Rewrite("Que répond /healthz pendant le chargement des modèles ?", fr, question).ok());

  // Names are read without the punctuation around them.
  const History es = After("¿Qué clave cambia el puerto de ragd?", "`server.port` [1].");
  EXPECT_TRUE(Rewrite("¿Cuál es el valor por defecto de server.host en ragd?", es, "¿Y «server.host»?").ok());
  EXPECT_FALSE(Rewrite("¿Cuál es el valor por defecto del puerto de ragd?", es, "¿Y «server.host»?").ok());
}

// A question that stands alone comes back as the earlier one: it is refused.
// A rewrite that adds the topic and rewords a little is kept.
TEST_F(FollowUpReplies, RefusesARewriteThatAsksSomethingElse) {
  const History en = After("What is the default daily token quota of each user?", "200,000 tokens [1].");
  EXPECT_FALSE(
      Rewrite("What is the default daily token quota of each user?", en, "How do I change the port of ragd?")
          .ok());
  EXPECT_TRUE(Rewrite("How do I change the port of ragd?", en, "How do I change the port of ragd?").ok());
  const History de = After("Wie lange bleibt eine Browser-Sitzung ohne Nutzung gültig?", "7 Tage [1].");
  EXPECT_TRUE(Rewrite("Wie lange bleibt eine Browser-Sitzung höchstens nach der Anmeldung gültig?", de,
                      "Und wie lange höchstens nach der Anmeldung?")
                  .ok());
  // Three of "does", "recognise", "that", "same" and "file" are kept, which
  // is enough; case and punctuation do not matter. One of them is not.
  const History en2 = After("What does ragd answer when I upload the same file twice?", "409 [1].");
  EXPECT_TRUE(Rewrite("How does ragd identify that the uploaded FILE is identical?", en2,
                      "How does it recognise that it is the same file?")
                  .ok());
  EXPECT_FALSE(Rewrite("What does ragd answer to a second upload?", en2,
                       "How does it recognise that it is the same file?")
                   .ok());
}

TEST_F(FollowUpReplies, NeedsAnEarlierQuestion) {
  EXPECT_FALSE(RewritesFollowUps(*engine_));  // the 0.5B is not asked
  EXPECT_EQ(RewriteRequest(*engine_, {{"assistant", "Hello."}}, "And its default?").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(FollowUp, TheAnswerModelRewritesFollowUpsToStandAlone) {
  auto engine = Load(ragd::testing::QwenModelPath("1.5b"));
  ASSERT_TRUE(engine);
  EXPECT_TRUE(RewritesFollowUps(*engine));
  inference::Scheduler scheduler(*engine, inference::SchedulerOptions());
  inference::LocalGenerator generator(scheduler);
  const Rewriter rewrite = RewriteWith(*engine, generator, std::chrono::minutes(2));
  struct Case {
    History history;
    const char* question;
    const char* language;
    std::vector<const char*> words;      // what the rewrite must hold, from the earlier question
    std::vector<const char*> not_words;  // what it must not take from the earlier question
  };
  const Case cases[] = {
      {After("Which setting sets the number of HTTP reactor threads?", "server.threads [1]."),
       "And what is its default?",
       "en",
       {"thread"}},
      {After("Quantos segundos uma requisição tem para enviar os cabeçalhos?", "30 segundos [1]."),
       "E para terminar uma resposta em streaming?",
       "pt",
       {"streaming"}},
      {After("Wie heißt das Cookie der Browser-Sitzung?", "ragd_session [1]."),
       "Und wie lange ist es gültig?",
       "de",
       {"Sitzung"}},
      // A change of subject stands alone.
      {After("Qual é o limite padrão de requisições por minuto?", "60 [1]."),
       "Como faço backup da pasta de dados?",
       "pt",
       {"backup", "pasta de dados"},
       {"requisições"}},
  };
  for (const Case& c : cases) {
    auto got = rewrite(c.history, c.question);
    ASSERT_TRUE(got.ok()) << c.question << ": " << got.status().ToString();
    for (const char* word : c.words)
      EXPECT_NE(got->find(word), std::string::npos) << c.question << " -> " << *got;
    for (const char* word : c.not_words)
      EXPECT_EQ(got->find(word), std::string::npos) << c.question << " -> " << *got;
    EXPECT_STREQ(DetectQuestionLanguage(*got).code, c.language) << *got;
    EXPECT_EQ(got->back(), '?') << c.question << " -> " << *got << " (an answer, not a question)";
  }
}

}  // namespace
}  // namespace ragd::app
