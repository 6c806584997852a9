// Who is calling: the API key of `Authorization: Bearer <key>` or the
// `ragd_session` cookie, resolved through Accounts.
#pragma once

#include <string>

#include "accounts/accounts.h"
#include "app/http/http_server.h"
#include "common/status.h"

namespace ragd::app {

inline constexpr const char* kSessionCookie = "ragd_session";

// The session cookie's value in a Cookie header, or "".
std::string SessionCookie(const HttpRequest& request);

// The authenticated user (kUnauthenticated when no or bad credentials).
Result<accounts::User> Authenticate(accounts::Accounts& accounts, const HttpRequest& request);

// kPermissionDenied unless `user` is an admin.
Status RequireAdmin(const accounts::User& user);

}  // namespace ragd::app
