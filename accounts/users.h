// User accounts: who may call ragd, with which role and token budget.
//
// Thread-safety: UserStore is safe to call from any number of threads.
// Password hashing (tens of milliseconds) runs outside every lock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounts/clock.h"
#include "accounts/db.h"
#include "common/status.h"

namespace ragd::accounts {

enum class Role { kUser, kAdmin };

// "user" / "admin" (the API and database spelling).
std::string_view RoleName(Role role);
// InvalidArgument for anything but "user" or "admin".
Result<Role> ParseRole(std::string_view name);

struct User {
  int64_t id = 0;                      // stable row id
  std::string username;                // as created (look-ups ignore ASCII case)
  Role role = Role::kUser;             // admin may manage documents and users
  std::optional<int64_t> token_quota;  // per-period budget override; nullopt = configured default
  int64_t created_at = 0;              // Unix seconds
  bool disabled = false;               // disabled users cannot authenticate
  bool has_password = false;           // false: API keys only, no browser login
};

struct NewUser {
  std::string username;                // 1-64 chars of [A-Za-z0-9_.-]
  std::string password;                // "" = no password (API keys only); else 8-1024 bytes
  Role role = Role::kUser;             // role of the new account
  std::optional<int64_t> token_quota;  // nullopt = configured default; else >= 0
};

// InvalidArgument naming the rule when `username` is not 1-64 chars of [A-Za-z0-9_.-].
Status ValidateUsername(std::string_view username);
// InvalidArgument unless 8 <= length <= 1024 bytes.
Status ValidatePassword(std::string_view password);

class UserStore {
 public:
  // `db` and `clock` must outlive the store.
  UserStore(std::shared_ptr<Db> db, const Clock* clock);

  // Creates an account. InvalidArgument (bad username/password/quota),
  // AlreadyExists (username taken, ignoring case).
  Result<User> Create(const NewUser& user);
  // NotFound when there is no such user.
  Result<User> Get(int64_t id);
  Result<User> GetByName(std::string_view username);
  // All users, ordered by id.
  Result<std::vector<User>> List();
  // Whether any admin account exists (disabled ones included).
  Result<bool> AnyAdmin();

  // NotFound when there is no such user; InvalidArgument for a negative quota.
  Status SetTokenQuota(int64_t id, std::optional<int64_t> token_quota);
  Status SetDisabled(int64_t id, bool disabled);
  Status SetPassword(int64_t id, std::string_view password);
  Status SetRole(int64_t id, Role role);
  // Admin accounts that are not disabled.
  Result<int64_t> CountActiveAdmins();

  // The user when `password` is right. Every failure (unknown user, wrong
  // password, no password set, disabled account) is the same
  // Unauthenticated("invalid username or password") and takes about the same
  // time, so callers cannot learn which usernames exist.
  Result<User> CheckPassword(std::string_view username, std::string_view password);

 private:
  std::shared_ptr<Db> db_;
  const Clock* clock_;
};

}  // namespace ragd::accounts
