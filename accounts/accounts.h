// Accounts: users, API keys, browser sessions, token quotas and rate limits,
// backed by `<data_dir>/app.db` or by PostgreSQL (see db.h). The HTTP routes
// call these; nothing here knows HTTP.
//
// Typical request flow in a route handler:
//   User user = api_keys().Authenticate(bearer)    or sessions().Authenticate(cookie)
//   rate_limiter().Admit(user.id, prompt + max_tokens, &refusal)   -> 429 rate_limit_error
//   quota().Reserve(user, prompt + max_tokens, route, &refusal)    -> 429 quota_exceeded
//   ... generate ...; reservation.Settle(prompt, completion);
//   rate_limiter().Refund(user.id, max_tokens - completion)
//
// Thread-safety: every component is safe to call from any number of threads.
// Ownership: Accounts owns its components; they live as long as it does.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "accounts/api_keys.h"
#include "accounts/clock.h"
#include "accounts/conversations.h"
#include "accounts/db.h"
#include "accounts/feedback.h"
#include "accounts/login_throttle.h"
#include "accounts/period.h"
#include "accounts/quota.h"
#include "accounts/rate_limiter.h"
#include "accounts/sessions.h"
#include "accounts/users.h"
#include "common/status.h"

namespace ragd::accounts {

struct AccountsOptions {
  std::string db_path =
      "data/app.db";             // the SQLite file (created with its folder); ":memory:" = private, for tests
  std::string postgres_url;      // non-empty: the store is this PostgreSQL database instead (db_path unused)
  QuotaOptions quota;            // token budgets (config quota.tokens_per_period, quota.period)
  RateLimitOptions rate_limits;  // config quota.requests_per_minute, quota.tokens_per_minute
  SessionOptions sessions;       // browser session lifetime
  LoginThrottleOptions login_throttle;  // sign-in backoff per account name and client address
  const Clock* clock = nullptr;  // nullptr = SystemClock(); must outlive Accounts and every Reservation
};

class Accounts {
 public:
  // Opens the store (migrating it) and builds the components.
  // Errors: as Db::Open or Db::OpenPostgres, Internal when libsodium cannot start.
  static Result<std::unique_ptr<Accounts>> Open(const AccountsOptions& options);

  // The user behind a request's credentials: the API key from
  // `Authorization: Bearer <key>` when `bearer_key` is non-empty, else the
  // `ragd_session` cookie value. Unauthenticated("missing credentials") when
  // both are empty; otherwise as ApiKeyStore/SessionStore::Authenticate.
  Result<User> Authenticate(std::string_view bearer_key, std::string_view session_token);

  // Administration shared by the HTTP routes and `ragd user`. Each takes
  // effect on the next request: credentials are looked up on every request.
  // Disabling a user also ends its sessions (its keys then answer like
  // unknown keys); a new password ends every session of the user.
  // InvalidArgument when the change would leave no enabled admin;
  // NotFound for an unknown user.
  Status SetDisabled(int64_t user_id, bool disabled);
  Status SetRole(int64_t user_id, Role role);
  Status ResetPassword(int64_t user_id, std::string_view password);

  // Ok when the store answers a trivial query (for /readyz); Unavailable
  // when PostgreSQL cannot be reached. A lost connection is reopened by the
  // next call, so a probe that fails once may pass the next time.
  Status CheckStore();

  UserStore& users() { return users_; }
  ApiKeyStore& api_keys() { return api_keys_; }
  SessionStore& sessions() { return sessions_; }
  QuotaLedger& quota() { return quota_; }
  RateLimiter& rate_limiter() { return rate_limiter_; }
  LoginThrottle& login_throttle() { return login_throttle_; }
  ConversationStore& conversations() { return conversations_; }
  FeedbackStore& feedback() { return feedback_; }
  const Clock& clock() const { return *clock_; }
  const AccountsOptions& options() const { return options_; }

 private:
  Accounts(const AccountsOptions& options, std::shared_ptr<Db> db);

  AccountsOptions options_;
  const Clock* clock_;
  std::shared_ptr<Db> db_;
  UserStore users_;
  ApiKeyStore api_keys_;
  SessionStore sessions_;
  QuotaLedger quota_;
  RateLimiter rate_limiter_;
  LoginThrottle login_throttle_;
  ConversationStore conversations_;
  FeedbackStore feedback_;
  std::mutex admin_mu_;  // serializes the last-admin check with the change it guards
};

// What EnsureAdmin did, for printing once at first start.
struct AdminBootstrap {
  bool created = false;             // false: an admin already existed, nothing was done
  std::string username;             // RAGD_ADMIN_USER or "admin"
  std::string password;             // RAGD_ADMIN_PASSWORD or a generated one
  bool password_generated = false;  // print it: nobody else knows it
  std::string api_key;              // RAGD_ADMIN_API_KEY or a generated one
  bool api_key_generated = false;   // print it: nobody else knows it
};

// Reads an environment variable; returns nullptr when unset (std::getenv fits).
using GetEnv = std::function<const char*(const char*)>;

// First start: when no admin account exists, creates one named
// RAGD_ADMIN_USER (default "admin") with password RAGD_ADMIN_PASSWORD and API
// key RAGD_ADMIN_API_KEY, generating whichever is unset or empty, and returns
// the credentials; the caller prints the generated ones once (they are stored
// only hashed). When an admin exists, returns created = false and ignores the
// environment. Errors: InvalidArgument (bad name, password shorter than 8, or
// malformed key), AlreadyExists (RAGD_ADMIN_USER is taken by a non-admin).
Result<AdminBootstrap> EnsureAdmin(Accounts& accounts, const GetEnv& getenv);

}  // namespace ragd::accounts
