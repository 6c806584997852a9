// ConversationStore and FeedbackStore: ownership, ordering, search by title,
// replacing turns, ratings that outlive their conversation, migration of an
// existing app.db.
#include <gtest/gtest.h>

#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;

class Conversations : public testing::BackendTest {
 protected:
  void SetUp() override {
    accounts_ = Open(&clock_);
    ASSERT_TRUE(accounts_);
    alice_ = MakeUser(*accounts_, "alice");
    bob_ = MakeUser(*accounts_, "bob");
  }
  ConversationStore& store() { return accounts_->conversations(); }

  Conversation MustCreate(const User& user, std::string_view title = "") {
    auto c = store().Create(user.id, title);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Conversation();
  }
  AppendedTurn MustAppend(const User& user, int64_t id, std::string q, std::string a,
                          int64_t replace_from = 0) {
    auto t = store().AppendTurn(user.id, id, {std::move(q), std::move(a), "{\"n\":1}"}, replace_from);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : AppendedTurn();
  }

  ManualClock clock_{testing::kNoonMillis};
  std::unique_ptr<Accounts> accounts_;
  User alice_, bob_;
};

TEST_P(Conversations, TurnsAreKeptInOrderAndNameTheConversation) {
  Conversation c = MustCreate(alice_);
  EXPECT_EQ(c.title, "");
  AppendedTurn first = MustAppend(alice_, c.id, "  What port\n does ragd   use? ", "8080 [1]");
  clock_.AdvanceSeconds(5);
  AppendedTurn second = MustAppend(alice_, c.id, "and in German?", "Anschluss 8080 [1]");
  EXPECT_LT(first.question_id, first.answer_id);
  EXPECT_LT(first.answer_id, second.question_id);

  auto got = store().Get(alice_.id, c.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->title, "What port does ragd use?");  // from the first question only
  EXPECT_EQ(got->message_count, 4);
  EXPECT_EQ(got->updated_at, testing::kNoonMillis / 1000 + 5);

  auto messages = store().Messages(alice_.id, c.id);
  ASSERT_TRUE(messages.ok());
  ASSERT_EQ(messages->size(), 4u);
  EXPECT_EQ((*messages)[0].role, "user");
  EXPECT_EQ((*messages)[1].role, "assistant");
  EXPECT_EQ((*messages)[1].content, "8080 [1]");
  EXPECT_EQ((*messages)[1].details, "{\"n\":1}");
  EXPECT_EQ((*messages)[0].details, "");
  EXPECT_EQ((*messages)[3].content, "Anschluss 8080 [1]");
}

TEST_P(Conversations, AnotherUsersConversationIsNotFound) {
  Conversation c = MustCreate(alice_, "Alice's");
  MustAppend(alice_, c.id, "q", "a");
  EXPECT_EQ(store().Get(bob_.id, c.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store().Messages(bob_.id, c.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store().Rename(bob_.id, c.id, "mine").code(), StatusCode::kNotFound);
  EXPECT_EQ(store().Delete(bob_.id, c.id).code(), StatusCode::kNotFound);
  EXPECT_EQ(store().AppendTurn(bob_.id, c.id, {"q", "a", ""}).status().code(), StatusCode::kNotFound);
  auto listed = store().List(bob_.id);
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  // Nothing of Alice's was touched.
  auto got = store().Get(alice_.id, c.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->title, "Alice's");
  EXPECT_EQ(got->message_count, 2);
  EXPECT_EQ(store().Get(alice_.id, c.id + 100).status().code(), StatusCode::kNotFound);
}

TEST_P(Conversations, ListIsNewestFirstAndSearchesTitlesLiterally) {
  Conversation a = MustCreate(alice_, "Backups of the data folder");
  clock_.AdvanceSeconds(1);
  Conversation b = MustCreate(alice_, "Quota 100% used");
  clock_.AdvanceSeconds(1);
  Conversation c = MustCreate(alice_, "Ports_and_TLS");
  clock_.AdvanceSeconds(1);
  MustAppend(alice_, a.id, "q", "a");  // now the most recent

  auto all = store().List(alice_.id);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, a.id);
  EXPECT_EQ((*all)[1].id, c.id);
  EXPECT_EQ((*all)[2].id, b.id);

  auto found = store().List(alice_.id, "BACKUP");
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].id, a.id);
  // '%' and '_' match themselves only.
  auto percent = store().List(alice_.id, "100%");
  ASSERT_TRUE(percent.ok());
  ASSERT_EQ(percent->size(), 1u);
  EXPECT_EQ((*percent)[0].id, b.id);
  auto underscore = store().List(alice_.id, "_");
  ASSERT_TRUE(underscore.ok());
  ASSERT_EQ(underscore->size(), 1u);
  EXPECT_EQ((*underscore)[0].id, c.id);
  auto limited = store().List(alice_.id, "", 2);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 2u);
}

TEST_P(Conversations, RenameAndDelete) {
  Conversation c = MustCreate(alice_);
  MustAppend(alice_, c.id, "first question", "answer");
  EXPECT_TRUE(store().Rename(alice_.id, c.id, "  Renamed ").ok());
  EXPECT_EQ(store().Get(alice_.id, c.id)->title, "Renamed");
  MustAppend(alice_, c.id, "second question", "answer");
  EXPECT_EQ(store().Get(alice_.id, c.id)->title, "Renamed");  // a chosen title stays

  EXPECT_EQ(store().Rename(alice_.id, c.id, "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store().Rename(alice_.id, c.id, std::string(201, 'x')).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store().Rename(alice_.id, c.id, "a\nb").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store().Rename(alice_.id, c.id, "\xff").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store().Create(alice_.id, std::string(201, 'x')).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store().Get(alice_.id, c.id)->title, "Renamed");

  EXPECT_TRUE(store().Delete(alice_.id, c.id).ok());
  EXPECT_EQ(store().Get(alice_.id, c.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store().Delete(alice_.id, c.id).code(), StatusCode::kNotFound);
}

TEST_P(Conversations, ReplaceFromDropsThatMessageAndLaterOnes) {
  Conversation c = MustCreate(alice_);
  AppendedTurn t1 = MustAppend(alice_, c.id, "q1", "a1");
  AppendedTurn t2 = MustAppend(alice_, c.id, "q2", "a2");
  MustAppend(alice_, c.id, "q3", "a3");
  // Edit q2 and ask again: q2 and everything after it are replaced.
  AppendedTurn edited = MustAppend(alice_, c.id, "q2 edited", "a2'", t2.question_id);
  auto messages = store().Messages(alice_.id, c.id);
  ASSERT_TRUE(messages.ok());
  ASSERT_EQ(messages->size(), 4u);
  EXPECT_EQ((*messages)[1].id, t1.answer_id);
  EXPECT_EQ((*messages)[2].content, "q2 edited");
  EXPECT_EQ((*messages)[3].id, edited.answer_id);

  // A message of another conversation is refused and nothing changes.
  Conversation other = MustCreate(alice_);
  AppendedTurn foreign = MustAppend(alice_, other.id, "x", "y");
  auto refused = store().AppendTurn(alice_.id, c.id, {"q", "a", ""}, foreign.question_id);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store().Messages(alice_.id, c.id)->size(), 4u);
}

TEST_P(Conversations, AnUnknownOwnerIsNotFound) {
  EXPECT_EQ(store().Create(12345, "nobody").status().code(), StatusCode::kNotFound);
}

TEST(TitleFromQuestion, FirstWordsOnOneLineCutOnACharacter) {
  EXPECT_EQ(TitleFromQuestion("  How do I\n\tback up?  "), "How do I back up?");
  std::string long_question(100, 'a');
  std::string title = TitleFromQuestion(long_question);
  EXPECT_LE(title.size(), 80u);
  EXPECT_TRUE(title.ends_with("\xE2\x80\xA6"));
  std::string accents;
  for (int i = 0; i < 60; ++i) accents += "\xC3\xA9";  // é, two bytes each
  title = TitleFromQuestion(accents);
  EXPECT_LE(title.size(), 80u);
  EXPECT_EQ(title.substr(0, 2), "\xC3\xA9");
  EXPECT_EQ(title.size() % 2, 1u);  // whole é's plus the three bytes of "…"
}

TEST_P(Conversations, FeedbackIsOnePerAnswerAndOutlivesTheConversation) {
  Conversation c = MustCreate(alice_);
  AppendedTurn t = MustAppend(alice_, c.id, "Which port?", "8080 [1]");
  FeedbackStore& feedback = accounts_->feedback();
  NewFeedback f{t.answer_id, -1, "wrong port", "Which port?", "8080 [1]", "{}"};
  auto rated = feedback.Rate(alice_.id, f);
  ASSERT_TRUE(rated.ok()) << rated.status().ToString();
  EXPECT_EQ(rated->rating, -1);
  EXPECT_EQ(rated->username, "alice");
  f.rating = 1;
  f.comment = "";
  rated = feedback.Rate(alice_.id, f);  // changes the rating, adds no row
  ASSERT_TRUE(rated.ok());
  auto list = feedback.List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].rating, 1);
  EXPECT_EQ((*list)[0].comment, "");
  auto mine = feedback.ForMessages(alice_.id, {t.answer_id, t.question_id});
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->size(), 1u);

  f.rating = 0;
  EXPECT_EQ(feedback.Rate(alice_.id, f).status().code(), StatusCode::kInvalidArgument);
  f.rating = 1;
  f.comment = std::string(kMaxFeedbackCommentBytes + 1, 'x');
  EXPECT_EQ(feedback.Rate(alice_.id, f).status().code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(store().Delete(alice_.id, c.id).ok());
  list = feedback.List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].message_id, 0);
  EXPECT_EQ((*list)[0].question, "Which port?");
  EXPECT_EQ((*list)[0].answer, "8080 [1]");
}

TEST_P(Conversations, GetWithQuestionFindsTheAskingTurn) {
  Conversation c = MustCreate(alice_);
  MustAppend(alice_, c.id, "q1", "a1");
  AppendedTurn t = MustAppend(alice_, c.id, "q2", "a2");
  auto pair = store().GetWithQuestion(alice_.id, t.answer_id);
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(pair->first.content, "a2");
  EXPECT_EQ(pair->second.content, "q2");
  EXPECT_EQ(store().GetWithQuestion(bob_.id, t.answer_id).status().code(), StatusCode::kNotFound);
}

class ConversationsMigration : public testing::BackendTest {};

TEST_P(ConversationsMigration, AVersion2DatabaseGainsTheTables) {
  {
    // A database as ragd left it before conversations: version 2, a user.
    auto db = testing::OpenDb(store());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto lock = (*db)->Lock();
    const char* version = postgres() ? "UPDATE schema_version SET version = 2;" : "PRAGMA user_version = 2;";
    ASSERT_TRUE((*db)->Exec("DROP TABLE feedback; DROP TABLE messages; DROP TABLE conversations;").ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP INDEX usage_holds; ALTER TABLE usage DROP COLUMN held; "
                           "ALTER TABLE usage DROP COLUMN held_until; DROP TABLE rate_buckets;")
                    .ok());
    ASSERT_TRUE((*db)->Exec(version).ok());
    ASSERT_TRUE(
        (*db)->Exec("INSERT INTO users (username, role, created_at) VALUES ('carol', 'user', 1);").ok());
  }
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  auto carol = accounts->users().GetByName("carol");
  ASSERT_TRUE(carol.ok());
  auto c = accounts->conversations().Create(carol->id, "after the upgrade");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(accounts->conversations().AppendTurn(carol->id, c->id, {"q", "a", ""}).ok());
  EXPECT_EQ(accounts->conversations().Get(carol->id, c->id)->message_count, 2);
  EXPECT_GE(Db::SchemaVersion(), 3);
}

RAGD_ON_BOTH_STORES(Conversations);
RAGD_ON_BOTH_STORES(ConversationsMigration);

}  // namespace
}  // namespace ragd::accounts
