#include <gtest/gtest.h>

#include "accounts/secrets.h"
#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::OpenAccounts;
using testing::TempDir;

class Users : public testing::BackendTest {};

TEST(Username, ValidatesCharactersAndLength) {
  EXPECT_TRUE(ValidateUsername("a").ok());
  EXPECT_TRUE(ValidateUsername("Alice_01.dev-x").ok());
  EXPECT_TRUE(ValidateUsername(std::string(64, 'x')).ok());
  EXPECT_EQ(ValidateUsername("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateUsername(std::string(65, 'x')).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateUsername("bob smith").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateUsername("bob@x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateUsername("b\xc3\xa9").code(), StatusCode::kInvalidArgument);
}

TEST(Secrets, PasswordHashVerifies) {
  Result<std::string> hash = HashPassword("correct horse");
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(hash->rfind("$argon2id$", 0), 0u) << *hash;
  EXPECT_TRUE(VerifyPassword(*hash, "correct horse"));
  EXPECT_FALSE(VerifyPassword(*hash, "correct horsf"));
  EXPECT_FALSE(VerifyPassword(*hash, ""));
  Result<std::string> again = HashPassword("correct horse");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*hash, *again);  // salted
}

TEST(Secrets, RandomTokensAreUrlSafeAndDistinct) {
  std::string a = RandomToken(32), b = RandomToken(32);
  EXPECT_EQ(a.size(), 43u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos);
  EXPECT_NE(HashToken(a, TokenPurpose::kApiKey), HashToken(a, TokenPurpose::kSession));
}

TEST_P(Users, CreateGetListAndDuplicates) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  UserStore& users = accounts->users();

  NewUser alice{"alice", "", Role::kUser, 5000};
  Result<User> a = users.Create(alice);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_GT(a->id, 0);
  EXPECT_EQ(a->username, "alice");
  EXPECT_EQ(a->role, Role::kUser);
  EXPECT_EQ(a->token_quota, 5000);
  EXPECT_EQ(a->created_at, testing::kNoonMillis / 1000);
  EXPECT_FALSE(a->disabled);
  EXPECT_FALSE(a->has_password);

  Result<User> b = users.Create({"Bob", "", Role::kAdmin, std::nullopt});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->role, Role::kAdmin);
  EXPECT_FALSE(b->token_quota.has_value());

  EXPECT_EQ(users.Create(alice).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(users.Create({"ALICE", "", Role::kUser, {}}).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(users.Create({"bad name", "", Role::kUser, {}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(users.Create({"carol", "short", Role::kUser, {}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(users.Create({"carol", "", Role::kUser, -1}).status().code(), StatusCode::kInvalidArgument);

  Result<User> by_id = users.Get(a->id);
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(by_id->username, "alice");
  Result<User> by_name = users.GetByName("bob");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->id, b->id);
  EXPECT_EQ(users.Get(999).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(users.GetByName("nobody").status().code(), StatusCode::kNotFound);

  Result<std::vector<User>> all = users.List();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].username, "alice");
  EXPECT_EQ((*all)[1].username, "Bob");

  ASSERT_TRUE(users.SetTokenQuota(a->id, std::nullopt).ok());
  EXPECT_FALSE(users.Get(a->id)->token_quota.has_value());
  ASSERT_TRUE(users.SetTokenQuota(a->id, 7).ok());
  EXPECT_EQ(users.Get(a->id)->token_quota, 7);
  EXPECT_EQ(users.SetTokenQuota(999, 7).code(), StatusCode::kNotFound);
  ASSERT_TRUE(users.SetDisabled(a->id, true).ok());
  EXPECT_TRUE(users.Get(a->id)->disabled);
}

TEST_P(Users, PasswordChecksGiveOneErrorForEveryFailure) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  UserStore& users = accounts->users();
  Result<User> alice = users.Create({"alice", "s3cret-pass", Role::kUser, {}});
  ASSERT_TRUE(alice.ok());
  EXPECT_TRUE(alice->has_password);
  ASSERT_TRUE(users.Create({"keyonly", "", Role::kUser, {}}).ok());

  Result<User> ok = users.CheckPassword("alice", "s3cret-pass");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->id, alice->id);
  EXPECT_TRUE(users.CheckPassword("ALICE", "s3cret-pass").ok());

  Status wrong = users.CheckPassword("alice", "s3cret-pasS").status();
  Status unknown = users.CheckPassword("mallory", "s3cret-pass").status();
  Status no_password = users.CheckPassword("keyonly", "whatever1").status();
  EXPECT_EQ(wrong.code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong.ToString(), unknown.ToString());
  EXPECT_EQ(wrong.ToString(), no_password.ToString());

  ASSERT_TRUE(users.SetDisabled(alice->id, true).ok());
  EXPECT_EQ(users.CheckPassword("alice", "s3cret-pass").status().ToString(), wrong.ToString());
  ASSERT_TRUE(users.SetDisabled(alice->id, false).ok());

  ASSERT_TRUE(users.SetPassword(alice->id, "another-pass").ok());
  EXPECT_FALSE(users.CheckPassword("alice", "s3cret-pass").ok());
  EXPECT_TRUE(users.CheckPassword("alice", "another-pass").ok());
}

TEST_P(Users, SurvivesReopening) {
  ManualClock clock(testing::kNoonMillis);
  int64_t id = 0;
  {
    auto accounts = Open(&clock);
    ASSERT_TRUE(accounts);
    Result<User> made = accounts->users().Create({"alice", "s3cret-pass", Role::kAdmin, 42});
    ASSERT_TRUE(made.ok());
    id = made->id;
  }
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  Result<User> back = accounts->users().Get(id);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->username, "alice");
  EXPECT_EQ(back->role, Role::kAdmin);
  EXPECT_EQ(back->token_quota, 42);
  EXPECT_TRUE(accounts->users().CheckPassword("alice", "s3cret-pass").ok());
}

TEST(Db, RefusesNewerSchemaAndGarbage) {
  TempDir dir;
  {
    Result<std::unique_ptr<Db>> db = Db::Open(dir.File("app.db"));
    ASSERT_TRUE(db.ok());
    auto lock = (*db)->Lock();
    ASSERT_TRUE((*db)->Exec("PRAGMA user_version = 999").ok());
  }
  EXPECT_EQ(Db::Open(dir.File("app.db")).status().code(), StatusCode::kUnsupported);

  std::FILE* f = std::fopen(dir.File("junk.db").c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::string junk(4096, 'j');
  std::fwrite(junk.data(), 1, junk.size(), f);
  std::fclose(f);
  EXPECT_EQ(Db::Open(dir.File("junk.db")).status().code(), StatusCode::kCorrupt);
}

RAGD_ON_BOTH_STORES(Users);

TEST(PostgresDb, RefusesNewerSchemaAndAnUnreachableServer) {
  const std::string url = ragd::testing::FreshPostgresSchema();
  ASSERT_FALSE(url.empty());
  {
    Result<std::unique_ptr<Db>> db = Db::OpenPostgres(url);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->dialect(), Dialect::kPostgres);
    auto lock = (*db)->Lock();
    ASSERT_TRUE((*db)->Exec("UPDATE schema_version SET version = 999").ok());
  }
  EXPECT_EQ(Db::OpenPostgres(url).status().code(), StatusCode::kUnsupported);
  TempDir dir;  // no server listens here
  Status unreachable = Db::OpenPostgres("host=" + dir.path() + " dbname=ragd connect_timeout=2").status();
  EXPECT_EQ(unreachable.code(), StatusCode::kUnavailable) << unreachable.ToString();
}

TEST(PostgresDb, AConnectionLostIsReopenedOnTheNextStatement) {
  const std::string url = ragd::testing::FreshPostgresSchema();
  ASSERT_FALSE(url.empty());
  // A name for this test's connection alone: other tests share the server.
  const std::string name = "ragd_lost_" + std::to_string(::getpid());
  ManualClock clock(testing::kNoonMillis);
  auto accounts = OpenAccounts(testing::Store{"", url + " application_name=" + name}, &clock);
  ASSERT_TRUE(accounts);
  User alice = testing::MakeUser(*accounts, "alice");

  // The server ends the connection (a restart, a failover, an idle timeout)
  // and waits until it is gone.
  auto end_connection = [&] {
    PGconn* admin = PQconnectdb(ragd::testing::TestPostgres().c_str());
    const std::string sql =
        "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = '" + name +
        "'";
    PGresult* killed = PQexec(admin, sql.c_str());
    EXPECT_EQ(PQresultStatus(killed), PGRES_TUPLES_OK) << PQerrorMessage(admin);
    EXPECT_EQ(PQntuples(killed), 1);
    PQclear(killed);
    PQfinish(admin);
  };

  // The statement that meets the closed connection fails with 503's code and
  // no internal detail; the next one runs on a new connection.
  end_connection();
  Result<User> lost = accounts->users().Get(alice.id);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(lost.status().message(), "the accounts database is unreachable; try again");
  Result<User> back = accounts->users().Get(alice.id);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->username, "alice");

  // The readiness probe meets it the same way, and heals it too.
  end_connection();
  EXPECT_EQ(accounts->CheckStore().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(accounts->CheckStore().ok());
  EXPECT_TRUE(accounts->users().Get(alice.id).ok());
}

}  // namespace
}  // namespace ragd::accounts
