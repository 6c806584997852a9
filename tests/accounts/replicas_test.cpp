// Two ragd replicas on one PostgreSQL: two Accounts, each with its own
// connection, see each other's users, keys, sessions and usage rows, and
// replicas starting together on an empty database migrate it once. An
// app.db copied into PostgreSQL (and back) keeps everything.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;
using testing::OpenAccounts;
using testing::Store;
using testing::TempDir;

TEST(PostgresReplicas, SeeEachOthersUsersKeysAndSessions) {
  const Store store{"", ragd::testing::FreshPostgresSchema()};
  ASSERT_FALSE(store.postgres_url.empty());
  ManualClock clock(testing::kNoonMillis);
  auto a = OpenAccounts(store, &clock);
  auto b = OpenAccounts(store, &clock);
  ASSERT_TRUE(a && b);

  Result<User> alice = a->users().Create({"alice", "alice-password", Role::kUser, 5000});
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  Result<User> seen = b->users().GetByName("ALICE");
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(seen->id, alice->id);
  EXPECT_EQ(seen->token_quota, 5000);
  EXPECT_EQ(b->users().Create({"Alice", "", Role::kUser, {}}).status().code(), StatusCode::kAlreadyExists);

  // A key made on B works on A; a session opened on A works on B.
  Result<NewApiKey> key = b->api_keys().Create(alice->id, "laptop");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  Result<User> by_key = a->Authenticate(key->key, "");
  ASSERT_TRUE(by_key.ok()) << by_key.status().ToString();
  EXPECT_EQ(by_key->id, alice->id);
  Result<Session> session = a->sessions().Login("alice", "alice-password");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Result<User> by_cookie = b->Authenticate("", session->token);
  ASSERT_TRUE(by_cookie.ok()) << by_cookie.status().ToString();
  EXPECT_EQ(by_cookie->id, alice->id);

  // Signing out on B ends the session on A; disabling on A locks the key out on B.
  ASSERT_TRUE(b->sessions().Logout(session->token).ok());
  EXPECT_EQ(a->Authenticate("", session->token).status().code(), StatusCode::kUnauthenticated);
  ASSERT_TRUE(a->SetDisabled(alice->id, true).ok());
  EXPECT_EQ(b->Authenticate(key->key, "").status().code(), StatusCode::kUnauthenticated);
  ASSERT_TRUE(b->SetDisabled(alice->id, false).ok());
  EXPECT_TRUE(a->Authenticate(key->key, "").ok());

  // The usage rows written by A are what B counts when it first loads the user.
  ASSERT_TRUE(a->quota().Charge(*alice, 120, 30, "/v1/chat/completions").ok());
  a->quota().Flush();
  Result<QuotaStatus> on_b = b->quota().GetStatus(*alice);
  ASSERT_TRUE(on_b.ok()) << on_b.status().ToString();
  EXPECT_EQ(on_b->used, 150);
  Result<std::vector<DayUsage>> days = b->quota().DailyUsage(alice->id, 0);
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].day, "2026-11-29");
  EXPECT_EQ((*days)[0].prompt_tokens, 120);

  // Conversations too.
  Result<Conversation> c = a->conversations().Create(alice->id, "shared");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(b->conversations().AppendTurn(alice->id, c->id, {"q", "a", ""}).ok());
  EXPECT_EQ(a->conversations().Get(alice->id, c->id)->message_count, 2);
}

TEST(PostgresReplicas, StartingTogetherMigrateOnceAndMakeOneAdmin) {
  const Store store{"", ragd::testing::FreshPostgresSchema()};
  ASSERT_FALSE(store.postgres_url.empty());
  ManualClock clock(testing::kNoonMillis);
  const GetEnv env = [](const char* name) -> const char* {
    return std::string_view(name) == "RAGD_ADMIN_PASSWORD" ? "first-start-pass" : nullptr;
  };
  std::vector<std::unique_ptr<Accounts>> replicas(4);
  std::vector<Result<AdminBootstrap>> boots(4, Status::Internal("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < replicas.size(); ++i) {
    threads.emplace_back([&, i] {
      replicas[i] = OpenAccounts(store, &clock);
      if (replicas[i]) boots[i] = EnsureAdmin(*replicas[i], env);
    });
  }
  for (std::thread& t : threads) t.join();
  int created = 0;
  for (size_t i = 0; i < replicas.size(); ++i) {
    ASSERT_TRUE(replicas[i]);
    ASSERT_TRUE(boots[i].ok()) << boots[i].status().ToString();
    created += boots[i]->created ? 1 : 0;
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(replicas[2]->users().CountActiveAdmins().value(), 1);
  User bob = MakeUser(*replicas[0], "bob");
  EXPECT_TRUE(replicas[3]->users().Get(bob.id).ok());
  auto db = testing::OpenDb(store);
  ASSERT_TRUE(db.ok());
  auto lock = (*db)->Lock();
  auto rows = (*db)->Prepare("SELECT COUNT(*), MAX(version) FROM schema_version");
  ASSERT_TRUE(rows.ok() && *rows->Step());
  EXPECT_EQ(rows->ColumnInt(0), 1);
  EXPECT_EQ(rows->ColumnInt(1), Db::SchemaVersion());
}

// What a user leaves in the store, read back through the components.
struct Footprint {
  User user;
  std::vector<ApiKeyInfo> keys;
  QuotaStatus quota;
  std::vector<DayUsage> days;
  std::vector<Conversation> conversations;
  std::vector<Message> messages;
  std::vector<Feedback> feedback;
};

Footprint FootprintOf(Accounts& accounts, const std::string& name) {
  Footprint f;
  f.user = accounts.users().GetByName(name).value();
  f.keys = accounts.api_keys().List(f.user.id).value();
  f.quota = accounts.quota().GetStatus(f.user).value();
  f.days = accounts.quota().DailyUsage(f.user.id, 0).value();
  f.conversations = accounts.conversations().List(f.user.id).value();
  for (const Conversation& c : f.conversations) {
    Result<std::vector<Message>> messages = accounts.conversations().Messages(f.user.id, c.id);
    EXPECT_TRUE(messages.ok());
    if (messages.ok()) f.messages.insert(f.messages.end(), messages->begin(), messages->end());
  }
  f.feedback = accounts.feedback().List(100).value();
  return f;
}

void ExpectSame(const Footprint& a, const Footprint& b) {
  EXPECT_EQ(a.user.id, b.user.id);
  EXPECT_EQ(a.user.token_quota, b.user.token_quota);
  EXPECT_EQ(a.user.has_password, b.user.has_password);
  ASSERT_EQ(a.keys.size(), b.keys.size());
  for (size_t i = 0; i < a.keys.size(); ++i) EXPECT_EQ(a.keys[i].prefix, b.keys[i].prefix);
  EXPECT_EQ(a.quota.used, b.quota.used);
  ASSERT_EQ(a.days.size(), b.days.size());
  for (size_t i = 0; i < a.days.size(); ++i) {
    EXPECT_EQ(a.days[i].day, b.days[i].day);
    EXPECT_EQ(a.days[i].completion_tokens, b.days[i].completion_tokens);
  }
  ASSERT_EQ(a.conversations.size(), b.conversations.size());
  ASSERT_EQ(a.messages.size(), b.messages.size());
  for (size_t i = 0; i < a.messages.size(); ++i) {
    EXPECT_EQ(a.messages[i].id, b.messages[i].id);
    EXPECT_EQ(a.messages[i].content, b.messages[i].content);
  }
  ASSERT_EQ(a.feedback.size(), b.feedback.size());
  for (size_t i = 0; i < a.feedback.size(); ++i) {
    EXPECT_EQ(a.feedback[i].message_id, b.feedback[i].message_id);
    EXPECT_EQ(a.feedback[i].comment, b.feedback[i].comment);
  }
}

TEST(StoreCopy, AnAppDbMovesToPostgresAndBackWithEverything) {
  TempDir dir;
  const Store sqlite{dir.File("app.db"), ""};
  const Store postgres{"", ragd::testing::FreshPostgresSchema()};
  ASSERT_FALSE(postgres.postgres_url.empty());
  ManualClock clock(testing::kNoonMillis);
  std::string key, token;
  Footprint before;
  {
    auto accounts = OpenAccounts(sqlite, &clock);
    ASSERT_TRUE(accounts);
    MakeUser(*accounts, "first");  // ids of the copy are not 1, 2, ...
    ASSERT_TRUE(accounts->users().Create({"gone", "", Role::kUser, {}}).ok());
    Result<User> rita = accounts->users().Create({"rita", "rita-password", Role::kAdmin, 7000});
    ASSERT_TRUE(rita.ok());
    key = accounts->api_keys().Create(rita->id, "laptop").value().key;
    token = accounts->sessions().Login("rita", "rita-password").value().token;
    ASSERT_TRUE(accounts->quota().Charge(*rita, 100, 23, "/v1/ask").ok());
    Conversation c = accounts->conversations().Create(rita->id, "moving").value();
    AppendedTurn turn = accounts->conversations().AppendTurn(rita->id, c.id, {"q?", "a.", "{}"}).value();
    ASSERT_TRUE(accounts->feedback().Rate(rita->id, {turn.answer_id, 1, "good", "q?", "a.", "{}"}).ok());
    before = FootprintOf(*accounts, "rita");
  }

  auto from = testing::OpenDb(sqlite);
  auto to = testing::OpenDb(postgres);
  ASSERT_TRUE(from.ok() && to.ok());
  auto copied = Db::Copy(**from, **to);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(copied->front(), std::make_pair(std::string("users"), int64_t{3}));
  EXPECT_EQ(Db::Copy(**from, **to).status().code(), StatusCode::kAlreadyExists);  // not twice

  auto moved = OpenAccounts(postgres, &clock);
  ASSERT_TRUE(moved);
  ExpectSame(before, FootprintOf(*moved, "rita"));
  EXPECT_TRUE(moved->users().CheckPassword("rita", "rita-password").ok());
  EXPECT_EQ(moved->Authenticate(key, "")->username, "rita");
  EXPECT_EQ(moved->Authenticate("", token)->username, "rita");
  // New rows get ids after the copied ones.
  EXPECT_GT(MakeUser(*moved, "newcomer").id, before.user.id);
  Conversation c2 = moved->conversations().Create(before.user.id, "after").value();
  EXPECT_GT(c2.id, before.conversations.front().id);
  AppendedTurn t2 = moved->conversations().AppendTurn(before.user.id, c2.id, {"q2", "a2", ""}).value();
  EXPECT_GT(t2.question_id, before.messages.back().id);

  // And back into an empty app.db (blobs read from PostgreSQL as bytes).
  const Store back{dir.File("back.db"), ""};
  auto back_db = testing::OpenDb(back);
  ASSERT_TRUE(back_db.ok());
  auto returned = Db::Copy(**to, **back_db);
  ASSERT_TRUE(returned.ok()) << returned.status().ToString();
  back_db->reset();
  auto again = OpenAccounts(back, &clock);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->Authenticate(key, "")->username, "rita");
  EXPECT_EQ(again->Authenticate("", token)->username, "rita");
  EXPECT_EQ(again->users().List()->size(), 4u);
}

}  // namespace
}  // namespace ragd::accounts
