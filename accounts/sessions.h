// Browser sessions: the `ragd_session` cookie behind the web pages.
//
// Login checks a password and makes a session token (32 random bytes,
// base64url); the store keeps only its BLAKE2b-256 hash. Expiry is sliding:
// a session lives `idle_timeout_s` past its last use, but never longer than
// `max_lifetime_s` after login. To avoid a database write on every request,
// the stored expiry is pushed forward at most once per `refresh_interval_s`.
// Expired sessions are deleted when met and on every login.
//
// Thread-safety: SessionStore is safe to call from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "accounts/clock.h"
#include "accounts/db.h"
#include "accounts/users.h"
#include "common/status.h"

namespace ragd::accounts {

struct SessionOptions {
  int64_t idle_timeout_s = 7 * 86400;   // a session ends this long after its last use
  int64_t max_lifetime_s = 30 * 86400;  // and at the latest this long after login (cookie Max-Age)
  int64_t refresh_interval_s = 3600;    // least time between two writes of a session's expiry
};

struct Session {
  std::string token;       // the cookie value; not stored anywhere, send it once
  User user;               // who logged in
  int64_t expires_at = 0;  // Unix seconds (sliding; see the file comment)
};

class SessionStore {
 public:
  // `db`, `users` and `clock` must outlive the store.
  SessionStore(std::shared_ptr<Db> db, UserStore* users, const Clock* clock, SessionOptions options);

  // Checks the password (UserStore::CheckPassword: one error for every
  // failure) and opens a session.
  Result<Session> Login(std::string_view username, std::string_view password);
  // The user of a live session, extending its expiry.
  // Unauthenticated("session expired or unknown") otherwise, also for a
  // disabled user.
  Result<User> Authenticate(std::string_view token);
  // Ends the session; Ok also when the token is unknown (logging out twice is fine).
  Status Logout(std::string_view token);
  // Ends every session of one user (after a password change or disabling).
  Status LogoutAll(int64_t user_id);
  // Deletes expired sessions; returns how many.
  Result<int64_t> PurgeExpired();

  const SessionOptions& options() const { return options_; }

 private:
  std::shared_ptr<Db> db_;
  UserStore* users_;
  const Clock* clock_;
  SessionOptions options_;
};

}  // namespace ragd::accounts
