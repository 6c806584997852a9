// Who is calling: the API key of `Authorization: Bearer <key>` or the
// session cookie, resolved through Accounts; and the checks that keep another
// site from acting with a browser's cookie (CSRF).
//
// Why these checks: a cookie is sent by the browser whoever wrote the page
// that makes the request. SameSite=Strict stops other sites, but "site" means
// the registrable domain, so another port of the same host or a sibling
// subdomain still counts as same-site. The checks follow Go's
// net/http.CrossOriginProtection (Go 1.25): unsafe methods must come from
// this origin by Sec-Fetch-Site, else by Origin compared with the Host the
// browser addressed; a request carrying neither header is not from a browser
// that could be tricked. A JSON body must be labelled application/json, which
// a cross-site form cannot send without a CORS preflight ragd never allows.
// API-key requests are not checked: no browser attaches a Bearer key by itself.
#pragma once

#include <string>

#include "accounts/accounts.h"
#include "app/http/http_server.h"
#include "common/status.h"

namespace ragd::app {

inline constexpr const char* kSessionCookie = "ragd_session";
// The name when the cookie is Secure: browsers accept it only with Secure,
// Path=/ and no Domain, so neither a sibling subdomain nor a plain-HTTP page
// can set or shadow it.
inline constexpr const char* kSecureSessionCookie = "__Host-ragd_session";

// The session cookie's name for this request (HttpRequest::cookie_secure).
const char* SessionCookieName(const HttpRequest& request);
// The session cookie's value in the Cookie header, or "".
std::string SessionCookie(const HttpRequest& request);
// Set-Cookie values that start a session of `max_age_s` seconds, or end it.
std::string SetSessionCookie(const HttpRequest& request, const std::string& token, int64_t max_age_s);
std::string ClearSessionCookie(const HttpRequest& request);

// PermissionDenied for an unsafe method (not GET/HEAD/OPTIONS) that a
// browser sent from another origin; see the file comment.
Status CheckSameOrigin(const HttpRequest& request);
// InvalidArgument when an unsafe request has a body that is neither
// application/json nor multipart/form-data (uploads).
Status CheckJsonContentType(const HttpRequest& request);

// The authenticated user (kUnauthenticated when no or bad credentials). A
// request authenticated by the session cookie must also pass CheckSameOrigin
// and CheckJsonContentType.
Result<accounts::User> Authenticate(accounts::Accounts& accounts, const HttpRequest& request);

// kPermissionDenied unless `user` is an admin.
Status RequireAdmin(const accounts::User& user);

}  // namespace ragd::app
