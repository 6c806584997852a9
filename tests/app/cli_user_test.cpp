// Black-box tests of `ragd user`: account administration on a data folder,
// checked through the accounts library reading the same app.db.
#include <gtest/gtest.h>

#include <regex>

#include "accounts/accounts.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace ragd {
namespace {

using testing::RagdBinary;
using testing::RunProcess;

class CliUserTest : public ::testing::Test {
 protected:
  testing::ProcessResult User(std::vector<std::string> args) {
    args.insert(args.begin(), {RagdBinary(), "user", "--data", dir_.path()});
    return RunProcess(args);
  }
  std::unique_ptr<accounts::Accounts> Open() {
    accounts::AccountsOptions options;
    options.db_path = dir_.File("app.db");
    auto opened = accounts::Accounts::Open(options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  // The value after "<label>: " in the command's output.
  static std::string Field(const std::string& out, const std::string& label) {
    std::smatch m;
    return std::regex_search(out, m, std::regex(label + ": (\\S+)")) ? m[1].str() : "";
  }
  testing::TempDir dir_;
};

TEST_F(CliUserTest, MissingDatabaseAndUsageErrors) {
  EXPECT_EQ(User({"list"}).exit_code, 1);
  EXPECT_EQ(User({}).exit_code, 2);
  ASSERT_EQ(User({"create", "alice"}).exit_code, 0);
  EXPECT_EQ(User({"frobnicate", "alice"}).exit_code, 2);
  EXPECT_EQ(User({"disable", "nobody"}).exit_code, 1);
  EXPECT_EQ(User({"set-quota", "alice", "lots"}).exit_code, 2);
  EXPECT_EQ(User({"create", "alice"}).exit_code, 1);  // exists
}

TEST_F(CliUserTest, CreateDisableResetRevokeSetQuota) {
  auto created = User({"create", "alice", "--quota", "1000"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string password = Field(created.out, "password");
  const std::string key = Field(created.out, "api key");
  ASSERT_FALSE(password.empty());
  ASSERT_FALSE(key.empty());

  auto accounts = Open();
  ASSERT_TRUE(accounts);
  auto alice = accounts->api_keys().Authenticate(key);
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ(alice->token_quota, 1000);
  auto session = accounts->sessions().Login("alice", password);
  ASSERT_TRUE(session.ok());
  auto listed = User({"list"});
  EXPECT_NE(listed.out.find("alice"), std::string::npos);
  EXPECT_NE(listed.out.find("active"), std::string::npos);

  ASSERT_EQ(User({"disable", "alice"}).exit_code, 0);
  EXPECT_FALSE(accounts->api_keys().Authenticate(key).ok());
  EXPECT_FALSE(accounts->sessions().Authenticate(session->token).ok());
  EXPECT_NE(User({"list"}).out.find("disabled"), std::string::npos);
  ASSERT_EQ(User({"enable", "alice"}).exit_code, 0);
  EXPECT_TRUE(accounts->api_keys().Authenticate(key).ok());

  auto reset = User({"reset-password", "alice"});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  const std::string new_password = Field(reset.out, "password");
  EXPECT_FALSE(accounts->sessions().Login("alice", password).ok());
  EXPECT_TRUE(accounts->sessions().Login("alice", new_password).ok());

  ASSERT_EQ(User({"set-quota", "alice", "5"}).exit_code, 0);
  EXPECT_EQ(accounts->users().GetByName("alice")->token_quota, 5);
  ASSERT_EQ(User({"set-quota", "alice", "default"}).exit_code, 0);
  EXPECT_FALSE(accounts->users().GetByName("alice")->token_quota.has_value());

  auto keys = accounts->api_keys().List(alice->id);
  ASSERT_TRUE(keys.ok() && keys->size() == 1);
  EXPECT_NE(User({"keys", "alice"}).out.find((*keys)[0].prefix), std::string::npos);
  ASSERT_EQ(User({"revoke-key", "alice", std::to_string((*keys)[0].id)}).exit_code, 0);
  EXPECT_FALSE(accounts->api_keys().Authenticate(key).ok());
  EXPECT_EQ(User({"revoke-key", "alice", std::to_string((*keys)[0].id)}).exit_code, 1);
}

}  // namespace
}  // namespace ragd
