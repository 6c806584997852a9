#include "accounts/accounts.h"

#include <utility>

#include "accounts/secrets.h"

namespace ragd::accounts {

Accounts::Accounts(const AccountsOptions& options, std::shared_ptr<Db> db)
    : options_(options),
      clock_(options.clock ? options.clock : &SystemClock()),
      db_(std::move(db)),
      users_(db_, clock_),
      api_keys_(db_, &users_, clock_),
      sessions_(db_, &users_, clock_, options.sessions),
      quota_(db_, clock_, options.quota),
      rate_limiter_(clock_, options.rate_limits) {}

Result<std::unique_ptr<Accounts>> Accounts::Open(const AccountsOptions& options) {
  RAGD_RETURN_IF_ERROR(InitSecrets());
  if (options.quota.tokens_per_period < 0)
    return Status::InvalidArgument("quota.tokens_per_period must be >= 0");
  if (options.rate_limits.requests_per_minute < 0 || options.rate_limits.tokens_per_minute < 0) {
    return Status::InvalidArgument("rate limits must be >= 0 (0 = unlimited)");
  }
  if (options.sessions.idle_timeout_s <= 0 || options.sessions.max_lifetime_s <= 0) {
    return Status::InvalidArgument("session lifetimes must be > 0");
  }
  Result<std::unique_ptr<Db>> db = Db::Open(options.db_path);
  if (!db.ok()) return db.status();
  return std::unique_ptr<Accounts>(new Accounts(options, std::shared_ptr<Db>(std::move(*db))));
}

Result<User> Accounts::Authenticate(std::string_view bearer_key, std::string_view session_token) {
  if (!bearer_key.empty()) return api_keys_.Authenticate(bearer_key);
  if (!session_token.empty()) return sessions_.Authenticate(session_token);
  return Status::Unauthenticated(
      "missing credentials: send an API key (Authorization: Bearer rk-...) or sign in");
}

Result<AdminBootstrap> EnsureAdmin(Accounts& accounts, const GetEnv& getenv) {
  AdminBootstrap out;
  Result<bool> any = accounts.users().AnyAdmin();
  if (!any.ok()) return any.status();
  if (*any) return out;

  auto env = [&](const char* name) -> std::string {
    const char* value = getenv ? getenv(name) : nullptr;
    return value ? std::string(value) : std::string();
  };
  out.username = env("RAGD_ADMIN_USER");
  if (out.username.empty()) out.username = "admin";
  out.password = env("RAGD_ADMIN_PASSWORD");
  if (out.password.empty()) {
    out.password = RandomToken(18);  // 24 characters, 144 bits
    out.password_generated = true;
  }
  out.api_key = env("RAGD_ADMIN_API_KEY");
  if (out.api_key.empty()) {
    out.api_key = std::string(kApiKeyPrefix) + RandomToken(32);
    out.api_key_generated = true;
  }
  // Check everything before writing anything.
  RAGD_RETURN_IF_ERROR(ValidateUsername(out.username));
  if (Status s = ValidatePassword(out.password); !s.ok()) {
    return Status::InvalidArgument("RAGD_ADMIN_PASSWORD: " + s.message());
  }
  if (!IsWellFormedApiKey(out.api_key)) {
    return Status::InvalidArgument(
        "RAGD_ADMIN_API_KEY must be \"rk-\" followed by 32-200 characters of [A-Za-z0-9_-]");
  }

  NewUser admin;
  admin.username = out.username;
  admin.password = out.password;
  admin.role = Role::kAdmin;
  Result<User> user = accounts.users().Create(admin);
  if (!user.ok()) return user.status();
  Result<NewApiKey> key = accounts.api_keys().Import(user->id, out.api_key, "bootstrap");
  if (!key.ok()) return key.status();
  out.created = true;
  return out;
}

}  // namespace ragd::accounts
