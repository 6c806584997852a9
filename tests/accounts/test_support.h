// Shared helpers for the accounts tests: a temporary folder, an Accounts on
// a manual clock, and the fixture that runs a suite on both stores.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "accounts/accounts.h"
#include "tests/support/postgres.h"
#include "tests/support/temp_dir.h"

namespace ragd::accounts::testing {

// 2026-11-29T12:00:00Z.
inline constexpr int64_t kNoonMillis = 1795953600LL * 1000;

using ragd::testing::TempDir;

// Where a test's accounts live: a SQLite path, or a PostgreSQL connection
// string (then the path is unused).
struct Store {
  std::string sqlite_path;
  std::string postgres_url;
};

inline std::unique_ptr<Accounts> OpenAccounts(const Store& store, const Clock* clock,
                                              AccountsOptions options = AccountsOptions()) {
  options.db_path = store.sqlite_path;
  options.postgres_url = store.postgres_url;
  options.clock = clock;
  Result<std::unique_ptr<Accounts>> accounts = Accounts::Open(options);
  EXPECT_TRUE(accounts.ok()) << accounts.status().ToString();
  return accounts.ok() ? std::move(*accounts) : nullptr;
}

inline std::unique_ptr<Accounts> OpenAccounts(const std::string& path, const Clock* clock,
                                              AccountsOptions options = AccountsOptions()) {
  return OpenAccounts(Store{path, ""}, clock, std::move(options));
}

inline Result<std::unique_ptr<Db>> OpenDb(const Store& store) {
  return store.postgres_url.empty() ? Db::Open(store.sqlite_path) : Db::OpenPostgres(store.postgres_url);
}

// A suite run once per store: TEST_P(Suite, Name) with `class Suite :
// public BackendTest {};` and RAGD_ON_BOTH_STORES(Suite). Test names end in
// /sqlite or /postgres.
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool postgres() const { return GetParam() == "postgres"; }
  // This test's store: the same one on every call (reopening finds the
  // data), empty at the start of the test.
  const Store& store() {
    if (!made_) {
      made_ = true;
      if (postgres()) {
        store_.postgres_url = ragd::testing::FreshPostgresSchema();
        EXPECT_FALSE(store_.postgres_url.empty()) << "no test PostgreSQL";
      } else {
        store_.sqlite_path = dir_.File("app.db");
      }
    }
    return store_;
  }
  std::unique_ptr<Accounts> Open(const Clock* clock, AccountsOptions options = AccountsOptions()) {
    return OpenAccounts(store(), clock, std::move(options));
  }
  // Another empty store of the same kind.
  Store FreshStore() {
    if (postgres()) return Store{"", ragd::testing::FreshPostgresSchema()};
    return Store{dir_.File("app" + std::to_string(++stores_) + ".db"), ""};
  }

  TempDir dir_;

 private:
  bool made_ = false;
  Store store_;
  int stores_ = 0;
};

#define RAGD_ON_BOTH_STORES(Suite)                                                                     \
  INSTANTIATE_TEST_SUITE_P(, Suite, ::testing::Values(std::string("sqlite"), std::string("postgres")), \
                           [](const ::testing::TestParamInfo<std::string>& info) { return info.param; })

// A user without password (no slow hashing) with an optional quota override.
inline User MakeUser(Accounts& accounts, const std::string& name,
                     std::optional<int64_t> quota = std::nullopt) {
  NewUser user;
  user.username = name;
  user.token_quota = quota;
  Result<User> made = accounts.users().Create(user);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return made.ok() ? *made : User();
}

}  // namespace ragd::accounts::testing
