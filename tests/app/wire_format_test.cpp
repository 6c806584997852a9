// The wire formats' RAG fields: which model answered and, for a follow-up,
// the question it was rewritten into, in /v1/ask's done event and body and in
// ragd-rag's OpenAI-shaped last chunk and body.
#include "app/services/wire_format.h"

#include <gtest/gtest.h>

#include <vector>

namespace ragd::app {
namespace {

const std::vector<Source>& NoSources() {
  static const std::vector<Source> none;
  return none;
}

Reply RagReply(std::string rewritten) {
  Reply r;
  r.id = "ask-1";
  r.rag = true;
  r.answer_model = "qwen";
  r.sources = &NoSources();
  r.text = "It listens on 8080.";
  r.rewritten_question = std::move(rewritten);
  return r;
}

const ReplyEnd kEnd{"stop", Json::object(), Json::object()};

TEST(WireFormatTest, AskCarriesTheRewrittenQuestionWhenThereIsOne) {
  const auto ask = AskWireFormat();
  const Reply rewritten = RagReply("What is the default port of ragd?");
  const Json done = ask->StreamEnd(rewritten, kEnd).back();
  EXPECT_EQ(done["type"], "done");
  EXPECT_EQ(done["rewritten_question"], "What is the default port of ragd?");
  EXPECT_EQ(done["answer_model"], "qwen");
  EXPECT_EQ(ask->Body(rewritten, kEnd)["rewritten_question"], "What is the default port of ragd?");

  const Reply as_asked = RagReply("");
  EXPECT_FALSE(ask->StreamEnd(as_asked, kEnd).back().contains("rewritten_question"));
  EXPECT_FALSE(ask->Body(as_asked, kEnd).contains("rewritten_question"));
}

TEST(WireFormatTest, ChatCarriesTheRewrittenQuestionOfRagAnswersOnly) {
  const auto chat = ChatWireFormat();
  Reply r = RagReply("Wie lange ist eine Sitzung gültig?");
  const Json last = chat->StreamEnd(r, kEnd).front();
  EXPECT_EQ(last["rewritten_question"], "Wie lange ist eine Sitzung gültig?");
  EXPECT_EQ(chat->Body(r, kEnd)["rewritten_question"], "Wie lange ist eine Sitzung gültig?");
  r.rag = false;  // a plain chat completion has no RAG fields at all
  EXPECT_FALSE(chat->Body(r, kEnd).contains("rewritten_question"));
  EXPECT_FALSE(chat->Body(r, kEnd).contains("answer_model"));
}

}  // namespace
}  // namespace ragd::app
