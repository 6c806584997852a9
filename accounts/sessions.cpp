#include "accounts/sessions.h"

#include <algorithm>
#include <utility>

#include "accounts/secrets.h"

namespace ragd::accounts {

SessionStore::SessionStore(std::shared_ptr<Db> db, UserStore* users, const Clock* clock,
                           SessionOptions options)
    : db_(std::move(db)), users_(users), clock_(clock), options_(options) {}

Result<Session> SessionStore::Login(std::string_view username, std::string_view password) {
  Result<User> user = users_->CheckPassword(username, password);
  if (!user.ok()) return user.status();
  (void)PurgeExpired();  // housekeeping; a failure here must not block the login
  Session session;
  session.token = RandomToken(32);
  session.user = std::move(*user);
  int64_t now = clock_->NowSeconds();
  session.expires_at = now + std::min(options_.idle_timeout_s, options_.max_lifetime_s);
  TokenHash hash = HashToken(session.token, TokenPurpose::kSession);
  auto lock = db_->Lock();
  Result<Statement> insert =
      db_->Prepare("INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)");
  if (!insert.ok()) return insert.status();
  insert->BindBlob(1, hash.data(), hash.size())
      .Bind(2, session.user.id)
      .Bind(3, now)
      .Bind(4, session.expires_at);
  RAGD_RETURN_IF_ERROR(insert->Run());
  return session;
}

Result<User> SessionStore::Authenticate(std::string_view token) {
  const Status denied = Status::Unauthenticated("session expired or unknown");
  if (token.empty() || token.size() > 256) return denied;
  TokenHash hash = HashToken(token, TokenPurpose::kSession);
  int64_t now = clock_->NowSeconds();
  int64_t user_id = 0;
  {
    auto lock = db_->Lock();
    int64_t created_at = 0;
    int64_t expires_at = 0;
    {
      Result<Statement> query =
          db_->Prepare("SELECT user_id, created_at, expires_at FROM sessions WHERE token_hash = ?");
      if (!query.ok()) return query.status();
      query->BindBlob(1, hash.data(), hash.size());
      Result<bool> row = query->Step();
      if (!row.ok()) return row.status();
      if (!*row) return denied;
      user_id = query->ColumnInt(0);
      created_at = query->ColumnInt(1);
      expires_at = query->ColumnInt(2);
    }
    if (now >= expires_at) {
      Result<Statement> del = db_->Prepare("DELETE FROM sessions WHERE token_hash = ?");
      if (del.ok()) (void)del->BindBlob(1, hash.data(), hash.size()).Run();
      return denied;
    }
    int64_t slid = std::min(now + options_.idle_timeout_s, created_at + options_.max_lifetime_s);
    if (slid - expires_at >= options_.refresh_interval_s) {
      Result<Statement> update = db_->Prepare("UPDATE sessions SET expires_at = ? WHERE token_hash = ?");
      if (!update.ok()) return update.status();
      update->Bind(1, slid).BindBlob(2, hash.data(), hash.size());
      RAGD_RETURN_IF_ERROR(update->Run());
    }
  }
  Result<User> user = users_->Get(user_id);
  if (!user.ok()) return user.status().code() == StatusCode::kNotFound ? denied : user.status();
  if (user->disabled) return denied;
  return user;
}

Status SessionStore::Logout(std::string_view token) {
  TokenHash hash = HashToken(token, TokenPurpose::kSession);
  auto lock = db_->Lock();
  Result<Statement> del = db_->Prepare("DELETE FROM sessions WHERE token_hash = ?");
  if (!del.ok()) return del.status();
  return del->BindBlob(1, hash.data(), hash.size()).Run();
}

Status SessionStore::LogoutAll(int64_t user_id) {
  auto lock = db_->Lock();
  Result<Statement> del = db_->Prepare("DELETE FROM sessions WHERE user_id = ?");
  if (!del.ok()) return del.status();
  return del->Bind(1, user_id).Run();
}

Result<int64_t> SessionStore::PurgeExpired() {
  auto lock = db_->Lock();
  Result<Statement> del = db_->Prepare("DELETE FROM sessions WHERE expires_at <= ?");
  if (!del.ok()) return del.status();
  RAGD_RETURN_IF_ERROR(del->Bind(1, clock_->NowSeconds()).Run());
  return db_->Changes();
}

}  // namespace ragd::accounts
