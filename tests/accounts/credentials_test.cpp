#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;
using testing::OpenAccounts;
using testing::TempDir;

class ApiKeys : public testing::BackendTest {};
class Sessions : public testing::BackendTest {};
class FirstAdmin : public testing::BackendTest {};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_P(ApiKeys, ShownOnceStoredHashedAndVerifiable) {
  ManualClock clock(testing::kNoonMillis);
  std::string key_text;
  int64_t alice_id = 0;
  {
    auto accounts = Open(&clock);
    ASSERT_TRUE(accounts);
    User alice = MakeUser(*accounts, "alice");
    alice_id = alice.id;
    Result<NewApiKey> key = accounts->api_keys().Create(alice.id, "laptop");
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    key_text = key->key;
    EXPECT_EQ(key_text.rfind("rk-", 0), 0u);
    EXPECT_GE(key_text.size(), 3u + 32u);
    EXPECT_TRUE(IsWellFormedApiKey(key_text));
    EXPECT_EQ(key->info.prefix, key_text.substr(0, 8));
    EXPECT_EQ(key->info.name, "laptop");

    Result<User> who = accounts->api_keys().Authenticate(key_text);
    ASSERT_TRUE(who.ok()) << who.status().ToString();
    EXPECT_EQ(who->id, alice.id);

    // The listing has no secret.
    Result<std::vector<ApiKeyInfo>> listed = accounts->api_keys().List(alice.id);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ((*listed)[0].prefix, key->info.prefix);
  }
  // Neither the key nor its secret part is anywhere in the database files.
  std::string body = key_text.substr(8);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (postgres()) break;  // PostgreSQL's files are the server's
    std::string bytes = ReadAll(store().sqlite_path + suffix);
    EXPECT_EQ(bytes.find(body), std::string::npos) << suffix;
  }
  // And it still works after reopening.
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  Result<User> who = accounts->api_keys().Authenticate(key_text);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->id, alice_id);
}

TEST_P(ApiKeys, WrongKeysSeveralKeysRevokeAndDisabled) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  ApiKeyStore& keys = accounts->api_keys();
  User alice = MakeUser(*accounts, "alice");
  User bob = MakeUser(*accounts, "bob");
  Result<NewApiKey> k1 = keys.Create(alice.id);
  Result<NewApiKey> k2 = keys.Create(alice.id);
  Result<NewApiKey> kb = keys.Create(bob.id);
  ASSERT_TRUE(k1.ok() && k2.ok() && kb.ok());
  EXPECT_NE(k1->key, k2->key);
  EXPECT_EQ(keys.Authenticate(k1->key)->id, alice.id);
  EXPECT_EQ(keys.Authenticate(k2->key)->id, alice.id);
  EXPECT_EQ(keys.Authenticate(kb->key)->id, bob.id);

  std::string tampered = k1->key;
  tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(keys.Authenticate(tampered).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(keys.Authenticate("").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(keys.Authenticate("rk-short").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(keys.Create(999).status().code(), StatusCode::kNotFound);

  // Bob cannot revoke Alice's key; Alice can.
  EXPECT_EQ(keys.Revoke(bob.id, k1->info.id).code(), StatusCode::kNotFound);
  ASSERT_TRUE(keys.Revoke(alice.id, k1->info.id).ok());
  EXPECT_EQ(keys.Authenticate(k1->key).status().code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(keys.Authenticate(k2->key).ok());

  ASSERT_TRUE(accounts->users().SetDisabled(alice.id, true).ok());
  // A disabled owner's key answers exactly like a key that never existed.
  Status disabled = keys.Authenticate(k2->key).status();
  EXPECT_EQ(disabled.code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(disabled.message(), keys.Authenticate(tampered).status().message());

  EXPECT_EQ(keys.Import(bob.id, "rk-has spaces in it that are not allowed here").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(keys.Import(bob.id, kb->key).status().code(), StatusCode::kAlreadyExists);
}

TEST_P(ApiKeys, ConcurrentCreateAndAuthenticate) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  std::vector<User> users;
  for (int t = 0; t < 8; ++t) users.push_back(MakeUser(*accounts, "user" + std::to_string(t)));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        Result<NewApiKey> key = accounts->api_keys().Create(users[t].id);
        if (!key.ok()) {
          ++failures;
          continue;
        }
        Result<User> who = accounts->api_keys().Authenticate(key->key);
        if (!who.ok() || who->id != users[t].id) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (const User& user : users) EXPECT_EQ(accounts->api_keys().List(user.id)->size(), 20u);
}

TEST_P(Sessions, LoginLookupLogout) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  ASSERT_TRUE(accounts->users().Create({"alice", "s3cret-pass", Role::kUser, {}}).ok());
  SessionStore& sessions = accounts->sessions();

  Status wrong = sessions.Login("alice", "nope-nope").status();
  Status unknown = sessions.Login("mallory", "s3cret-pass").status();
  EXPECT_EQ(wrong.code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong.ToString(), unknown.ToString());

  Result<Session> s = sessions.Login("alice", "s3cret-pass");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->user.username, "alice");
  EXPECT_EQ(s->expires_at, clock.NowSeconds() + 7 * 86400);
  Result<User> who = sessions.Authenticate(s->token);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->username, "alice");

  // Session tokens are not API keys and the other way round.
  EXPECT_FALSE(accounts->api_keys().Authenticate(s->token).ok());
  EXPECT_FALSE(sessions.Authenticate("x" + s->token).ok());

  // The facade picks the credential that was sent.
  EXPECT_EQ(accounts->Authenticate("", s->token)->username, "alice");
  EXPECT_EQ(accounts->Authenticate(s->token, "").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(accounts->Authenticate("", "").status().code(), StatusCode::kUnauthenticated);

  ASSERT_TRUE(sessions.Logout(s->token).ok());
  EXPECT_EQ(sessions.Authenticate(s->token).status().code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(sessions.Logout(s->token).ok());  // twice is fine
}

TEST_P(Sessions, IdleExpirySlidesUpToTheMaximumLifetime) {
  ManualClock clock(testing::kNoonMillis);
  AccountsOptions options;
  options.sessions.idle_timeout_s = 1000;
  options.sessions.max_lifetime_s = 5000;
  options.sessions.refresh_interval_s = 100;
  auto accounts = Open(&clock, options);
  ASSERT_TRUE(accounts);
  ASSERT_TRUE(accounts->users().Create({"alice", "s3cret-pass", Role::kUser, {}}).ok());
  SessionStore& sessions = accounts->sessions();

  // Unused: ends after the idle timeout.
  Result<Session> idle = sessions.Login("alice", "s3cret-pass");
  ASSERT_TRUE(idle.ok());
  clock.AdvanceSeconds(999);
  EXPECT_TRUE(sessions.Authenticate(idle->token).ok());  // slides to +1999
  clock.AdvanceSeconds(999);
  EXPECT_TRUE(sessions.Authenticate(idle->token).ok());
  clock.AdvanceSeconds(1000);
  EXPECT_EQ(sessions.Authenticate(idle->token).status().code(), StatusCode::kUnauthenticated);

  // Used every 900 s: lives until the maximum lifetime, then ends.
  Result<Session> busy = sessions.Login("alice", "s3cret-pass");
  ASSERT_TRUE(busy.ok());
  int64_t login = clock.NowSeconds();
  while (clock.NowSeconds() + 900 < login + 5000) {
    clock.AdvanceSeconds(900);
    ASSERT_TRUE(sessions.Authenticate(busy->token).ok()) << clock.NowSeconds() - login;
  }
  clock.SetMillis((login + 5000) * 1000);
  EXPECT_EQ(sessions.Authenticate(busy->token).status().code(), StatusCode::kUnauthenticated);

  // Expired sessions are purged.
  Result<Session> third = sessions.Login("alice", "s3cret-pass");
  ASSERT_TRUE(third.ok());
  clock.AdvanceSeconds(2000);
  Result<int64_t> purged = sessions.PurgeExpired();
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 1);
}

TEST_P(Sessions, DisabledUsersAndLogoutAll) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  Result<User> alice = accounts->users().Create({"alice", "s3cret-pass", Role::kUser, {}});
  ASSERT_TRUE(alice.ok());
  SessionStore& sessions = accounts->sessions();
  Result<Session> a = sessions.Login("alice", "s3cret-pass");
  Result<Session> b = sessions.Login("alice", "s3cret-pass");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->token, b->token);
  ASSERT_TRUE(accounts->users().SetDisabled(alice->id, true).ok());
  EXPECT_FALSE(sessions.Authenticate(a->token).ok());
  ASSERT_TRUE(accounts->users().SetDisabled(alice->id, false).ok());
  EXPECT_TRUE(sessions.Authenticate(a->token).ok());
  ASSERT_TRUE(sessions.LogoutAll(alice->id).ok());
  EXPECT_FALSE(sessions.Authenticate(a->token).ok());
  EXPECT_FALSE(sessions.Authenticate(b->token).ok());
}

GetEnv FakeEnv(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST_P(FirstAdmin, GeneratesEverythingWithoutEnvAndOnlyOnce) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  Result<AdminBootstrap> boot = EnsureAdmin(*accounts, FakeEnv({}));
  ASSERT_TRUE(boot.ok()) << boot.status().ToString();
  EXPECT_TRUE(boot->created);
  EXPECT_EQ(boot->username, "admin");
  EXPECT_TRUE(boot->password_generated);
  EXPECT_TRUE(boot->api_key_generated);
  EXPECT_GE(boot->password.size(), 16u);
  EXPECT_TRUE(IsWellFormedApiKey(boot->api_key));

  Result<User> by_key = accounts->api_keys().Authenticate(boot->api_key);
  ASSERT_TRUE(by_key.ok());
  EXPECT_EQ(by_key->role, Role::kAdmin);
  Result<Session> by_password = accounts->sessions().Login("admin", boot->password);
  ASSERT_TRUE(by_password.ok());
  EXPECT_EQ(by_password->user.role, Role::kAdmin);

  Result<AdminBootstrap> again = EnsureAdmin(*accounts, FakeEnv({{"RAGD_ADMIN_USER", "other"}}));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(accounts->users().List()->size(), 1u);
}

TEST_P(FirstAdmin, UsesTheEnvironment) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  const std::string key = "rk-" + std::string(40, 'k');
  Result<AdminBootstrap> boot = EnsureAdmin(*accounts, FakeEnv({{"RAGD_ADMIN_USER", "root"},
                                                                {"RAGD_ADMIN_PASSWORD", "pa55word!"},
                                                                {"RAGD_ADMIN_API_KEY", key}}));
  ASSERT_TRUE(boot.ok()) << boot.status().ToString();
  EXPECT_TRUE(boot->created);
  EXPECT_FALSE(boot->password_generated);
  EXPECT_FALSE(boot->api_key_generated);
  EXPECT_EQ(boot->username, "root");
  EXPECT_EQ(accounts->api_keys().Authenticate(key)->username, "root");
  EXPECT_TRUE(accounts->users().CheckPassword("root", "pa55word!").ok());
}

TEST_P(FirstAdmin, PartialEnvAndBadValues) {
  ManualClock clock(testing::kNoonMillis);
  {
    auto accounts = Open(&clock);
    ASSERT_TRUE(accounts);
    Result<AdminBootstrap> boot = EnsureAdmin(*accounts, FakeEnv({{"RAGD_ADMIN_PASSWORD", "pa55word!"}}));
    ASSERT_TRUE(boot.ok());
    EXPECT_FALSE(boot->password_generated);
    EXPECT_TRUE(boot->api_key_generated);
    EXPECT_TRUE(accounts->users().CheckPassword("admin", "pa55word!").ok());
  }
  auto accounts = OpenAccounts(FreshStore(), &clock);
  ASSERT_TRUE(accounts);
  EXPECT_EQ(EnsureAdmin(*accounts, FakeEnv({{"RAGD_ADMIN_PASSWORD", "short"}})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(EnsureAdmin(*accounts, FakeEnv({{"RAGD_ADMIN_API_KEY", "sk-nope"}})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(EnsureAdmin(*accounts, FakeEnv({{"RAGD_ADMIN_USER", "no spaces"}})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts->users().List()->size(), 0u);  // nothing written on failure
  ASSERT_TRUE(accounts->users().Create({"taken", "", Role::kUser, {}}).ok());
  EXPECT_EQ(EnsureAdmin(*accounts, FakeEnv({{"RAGD_ADMIN_USER", "taken"}})).status().code(),
            StatusCode::kAlreadyExists);
}

RAGD_ON_BOTH_STORES(ApiKeys);
RAGD_ON_BOTH_STORES(Sessions);
RAGD_ON_BOTH_STORES(FirstAdmin);

}  // namespace
}  // namespace ragd::accounts
