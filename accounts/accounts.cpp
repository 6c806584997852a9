#include "accounts/accounts.h"

#include <cstdio>
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
      rate_limiter_(db_, clock_, options.rate_limits),
      login_throttle_(clock_, options.login_throttle),
      conversations_(db_, clock_),
      feedback_(db_, clock_) {}

Result<std::unique_ptr<Accounts>> Accounts::Open(const AccountsOptions& options) {
  RAGD_RETURN_IF_ERROR(InitSecrets());
  if (options.quota.tokens_per_period < 0)
    return Status::InvalidArgument("quota.tokens_per_period must be >= 0");
  if (options.rate_limits.requests_per_minute < 0 || options.rate_limits.tokens_per_minute < 0) {
    return Status::InvalidArgument("rate limits must be >= 0 (0 = unlimited)");
  }
  const LoginThrottleOptions& t = options.login_throttle;
  if (t.account_free_failures < 0 || t.address_free_failures < 0 || t.base_delay_s < 1 ||
      t.max_delay_s < t.base_delay_s || t.forget_after_s < 1 || t.max_entries < 1) {
    return Status::InvalidArgument("sign-in backoff: free failures >= 0, 1 <= base delay <= max delay");
  }
  if (options.sessions.idle_timeout_s <= 0 || options.sessions.max_lifetime_s <= 0) {
    return Status::InvalidArgument("session lifetimes must be > 0");
  }
  Result<std::unique_ptr<Db>> db =
      options.postgres_url.empty() ? Db::Open(options.db_path) : Db::OpenPostgres(options.postgres_url);
  if (!db.ok()) return db.status();
  return std::unique_ptr<Accounts>(new Accounts(options, std::shared_ptr<Db>(std::move(*db))));
}

Status Accounts::CheckStore() {
  Status st;
  {
    auto lock = db_->Lock();
    st = db_->Exec("SELECT 1");
  }
  if (st.ok() || st.code() == StatusCode::kUnavailable) return st;  // the latter says nothing internal
  std::fprintf(stderr, "ragd: the accounts store does not answer: %s\n", st.ToString().c_str());
  return Status::Unavailable("the accounts store does not answer");
}

Result<User> Accounts::Authenticate(std::string_view bearer_key, std::string_view session_token) {
  if (!bearer_key.empty()) return api_keys_.Authenticate(bearer_key);
  if (!session_token.empty()) return sessions_.Authenticate(session_token);
  return Status::Unauthenticated(
      "missing credentials: send an API key (Authorization: Bearer rk-...) or sign in");
}

namespace {

// InvalidArgument when taking `user` out of the enabled admins leaves none.
Status KeepOneAdmin(UserStore& users, const User& user) {
  if (user.role != Role::kAdmin || user.disabled) return Status::Ok();
  Result<int64_t> admins = users.CountActiveAdmins();
  if (!admins.ok()) return admins.status();
  if (*admins <= 1) return Status::InvalidArgument("\"" + user.username + "\" is the last enabled admin");
  return Status::Ok();
}

}  // namespace

Status Accounts::SetDisabled(int64_t user_id, bool disabled) {
  {
    std::lock_guard<std::mutex> lock(admin_mu_);
    Result<User> user = users_.Get(user_id);
    if (!user.ok()) return user.status();
    if (disabled) RAGD_RETURN_IF_ERROR(KeepOneAdmin(users_, *user));
    RAGD_RETURN_IF_ERROR(users_.SetDisabled(user_id, disabled));
  }
  return disabled ? sessions_.LogoutAll(user_id) : Status::Ok();
}

Status Accounts::SetRole(int64_t user_id, Role role) {
  std::lock_guard<std::mutex> lock(admin_mu_);
  Result<User> user = users_.Get(user_id);
  if (!user.ok()) return user.status();
  if (role != Role::kAdmin) RAGD_RETURN_IF_ERROR(KeepOneAdmin(users_, *user));
  return users_.SetRole(user_id, role);
}

Status Accounts::ResetPassword(int64_t user_id, std::string_view password) {
  RAGD_RETURN_IF_ERROR(users_.SetPassword(user_id, password));
  return sessions_.LogoutAll(user_id);
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
  if (user.status().code() == StatusCode::kAlreadyExists) {
    // Another replica sharing the store may have made the admin meanwhile.
    Result<bool> made = accounts.users().AnyAdmin();
    if (made.ok() && *made) return AdminBootstrap();
  }
  if (!user.ok()) return user.status();
  Result<NewApiKey> key = accounts.api_keys().Import(user->id, out.api_key, "bootstrap");
  if (!key.ok()) return key.status();
  out.created = true;
  return out;
}

}  // namespace ragd::accounts
