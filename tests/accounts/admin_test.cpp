// Account administration: disabling, roles, password resets, and the rule
// that some enabled admin always remains.
#include <gtest/gtest.h>

#include "tests/accounts/test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;
using testing::OpenAccounts;

class Admin : public testing::BackendTest {};

User MakeAdmin(Accounts& accounts, const std::string& name) {
  NewUser admin;
  admin.username = name;
  admin.role = Role::kAdmin;
  Result<User> made = accounts.users().Create(admin);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return made.ok() ? *made : User();
}

TEST_P(Admin, DisablingEndsSessionsAndKeysUntilEnabledAgain) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  NewUser nu;
  nu.username = "alice";
  nu.password = "alice-password";
  Result<User> alice = accounts->users().Create(nu);
  ASSERT_TRUE(alice.ok());
  Result<NewApiKey> key = accounts->api_keys().Create(alice->id);
  Result<Session> session = accounts->sessions().Login("alice", "alice-password");
  ASSERT_TRUE(key.ok() && session.ok());

  ASSERT_TRUE(accounts->SetDisabled(alice->id, true).ok());
  EXPECT_FALSE(accounts->api_keys().Authenticate(key->key).ok());
  EXPECT_FALSE(accounts->sessions().Authenticate(session->token).ok());

  // Enabling brings the keys back, not the ended session.
  ASSERT_TRUE(accounts->SetDisabled(alice->id, false).ok());
  EXPECT_TRUE(accounts->api_keys().Authenticate(key->key).ok());
  EXPECT_FALSE(accounts->sessions().Authenticate(session->token).ok());
  EXPECT_EQ(accounts->SetDisabled(999, true).code(), StatusCode::kNotFound);
}

TEST_P(Admin, ResetPasswordEndsEverySessionAndChangesTheSignIn) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  NewUser nu;
  nu.username = "bob";
  nu.password = "old-password";
  Result<User> bob = accounts->users().Create(nu);
  ASSERT_TRUE(bob.ok());
  Result<Session> session = accounts->sessions().Login("bob", "old-password");
  ASSERT_TRUE(session.ok());

  EXPECT_EQ(accounts->ResetPassword(bob->id, "short").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(accounts->sessions().Authenticate(session->token).ok());
  ASSERT_TRUE(accounts->ResetPassword(bob->id, "new-password").ok());
  EXPECT_FALSE(accounts->sessions().Authenticate(session->token).ok());
  EXPECT_FALSE(accounts->sessions().Login("bob", "old-password").ok());
  EXPECT_TRUE(accounts->sessions().Login("bob", "new-password").ok());
}

TEST_P(Admin, TheLastEnabledAdminCannotBeDisabledOrDemoted) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock);
  ASSERT_TRUE(accounts);
  User root = MakeAdmin(*accounts, "root");
  User carol = MakeUser(*accounts, "carol");

  EXPECT_EQ(accounts->SetDisabled(root.id, true).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts->SetRole(root.id, Role::kUser).code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(accounts->SetRole(carol.id, Role::kAdmin).ok());
  EXPECT_EQ(accounts->users().Get(carol.id)->role, Role::kAdmin);
  ASSERT_TRUE(accounts->SetDisabled(root.id, true).ok());
  EXPECT_EQ(accounts->SetRole(carol.id, Role::kUser).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(accounts->SetDisabled(root.id, false).ok());
  ASSERT_TRUE(accounts->SetRole(carol.id, Role::kUser).ok());
  EXPECT_EQ(accounts->users().Get(carol.id)->role, Role::kUser);
}

RAGD_ON_BOTH_STORES(Admin);

}  // namespace
}  // namespace ragd::accounts
