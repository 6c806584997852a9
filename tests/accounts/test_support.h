// Shared helpers for the accounts tests: a temporary folder and an Accounts
// on a manual clock.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "accounts/accounts.h"
#include "tests/support/temp_dir.h"

namespace ragd::accounts::testing {

// 2026-11-29T12:00:00Z.
inline constexpr int64_t kNoonMillis = 1795953600LL * 1000;

using ragd::testing::TempDir;

inline std::unique_ptr<Accounts> OpenAccounts(const std::string& path, const Clock* clock,
                                              AccountsOptions options = AccountsOptions()) {
  options.db_path = path;
  options.clock = clock;
  Result<std::unique_ptr<Accounts>> accounts = Accounts::Open(options);
  EXPECT_TRUE(accounts.ok()) << accounts.status().ToString();
  return accounts.ok() ? std::move(*accounts) : nullptr;
}

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
