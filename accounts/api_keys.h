// API keys: `Authorization: Bearer rk-...` credentials for integrators.
//
// A key is "rk-" followed by 43 base64url characters (32 random bytes). It is
// shown once, when made; the store keeps only its BLAKE2b-256 hash (see
// secrets.h for why a fast hash is right here) and a short display prefix.
// A user may hold several keys.
//
// Thread-safety: ApiKeyStore is safe to call from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accounts/clock.h"
#include "accounts/db.h"
#include "accounts/users.h"
#include "common/status.h"

namespace ragd::accounts {

inline constexpr std::string_view kApiKeyPrefix = "rk-";

struct ApiKeyInfo {
  int64_t id = 0;          // row id, for revoking
  int64_t user_id = 0;     // owner
  std::string prefix;      // first 8 characters of the key ("rk-AbCdE"), for display
  std::string name;        // free label given at creation
  int64_t created_at = 0;  // Unix seconds
};

struct NewApiKey {
  std::string key;  // the full key; not stored anywhere, show it once
  ApiKeyInfo info;  // what is stored
};

// Whether `key` has the shape of an API key: "rk-" + 32..200 chars of
// [A-Za-z0-9_-]. Keys given through RAGD_ADMIN_API_KEY must pass this.
bool IsWellFormedApiKey(std::string_view key);

class ApiKeyStore {
 public:
  // `db`, `users` and `clock` must outlive the store.
  ApiKeyStore(std::shared_ptr<Db> db, UserStore* users, const Clock* clock);

  // Makes a new random key for `user_id`. NotFound when the user does not exist.
  Result<NewApiKey> Create(int64_t user_id, std::string_view name = "");
  // Stores a key chosen by the operator (RAGD_ADMIN_API_KEY).
  // InvalidArgument unless IsWellFormedApiKey; AlreadyExists if stored already.
  Result<NewApiKey> Import(int64_t user_id, std::string_view key, std::string_view name = "");

  // The owner of `key`. Unauthenticated("invalid API key") for an unknown or
  // malformed key and for a key whose owner is disabled: a caller cannot tell
  // a disabled account's key from one that never existed.
  Result<User> Authenticate(std::string_view key);

  // The keys of one user (no secrets), oldest first.
  Result<std::vector<ApiKeyInfo>> List(int64_t user_id);
  // Deletes key `key_id` of `user_id`; NotFound if that user has no such key.
  Status Revoke(int64_t user_id, int64_t key_id);

 private:
  std::shared_ptr<Db> db_;
  UserStore* users_;
  const Clock* clock_;
};

}  // namespace ragd::accounts
