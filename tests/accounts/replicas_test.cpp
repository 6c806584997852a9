// Two ragd replicas on one PostgreSQL: two Accounts, each with its own
// connection, see each other's users, keys, sessions and usage rows, and
// replicas starting together on an empty database migrate it once.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;
using testing::OpenAccounts;
using testing::Store;

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

}  // namespace
}  // namespace ragd::accounts
