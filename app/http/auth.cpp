#include "app/http/auth.h"

#include "common/text.h"

namespace ragd::app {
namespace {

bool SafeMethod(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

// "host[:port]" of an origin or URL ("https://a.example:8443" -> "a.example:8443").
std::string HostOf(std::string_view origin) {
  const size_t scheme = origin.find("://");
  if (scheme != std::string_view::npos) origin.remove_prefix(scheme + 3);
  return AsciiLower(origin.substr(0, origin.find('/')));
}

}  // namespace

const char* SessionCookieName(const HttpRequest& request) {
  return request.cookie_secure ? kSecureSessionCookie : kSessionCookie;
}

std::string SessionCookie(const HttpRequest& request) {
  const std::string cookies = request.Header("cookie");
  const std::string prefix = std::string(SessionCookieName(request)) + "=";
  size_t pos = 0;
  while (pos < cookies.size()) {
    size_t end = cookies.find(';', pos);
    if (end == std::string::npos) end = cookies.size();
    std::string_view item = Trim(std::string_view(cookies).substr(pos, end - pos));
    if (item.substr(0, prefix.size()) == prefix) return std::string(item.substr(prefix.size()));
    pos = end + 1;
  }
  return "";
}

std::string SetSessionCookie(const HttpRequest& request, const std::string& token, int64_t max_age_s) {
  return std::string(SessionCookieName(request)) + "=" + token + "; Path=/; HttpOnly; SameSite=Strict" +
         (request.cookie_secure ? "; Secure" : "") + "; Max-Age=" + std::to_string(max_age_s);
}

std::string ClearSessionCookie(const HttpRequest& request) { return SetSessionCookie(request, "", 0); }

Status CheckSameOrigin(const HttpRequest& request) {
  if (SafeMethod(request.method)) return Status::Ok();
  const Status refused =
      Status::PermissionDenied("cross-origin request refused: it must come from this site's pages");
  const std::string site = AsciiLower(request.Header("sec-fetch-site"));
  if (site == "same-origin" || site == "none") return Status::Ok();
  if (!site.empty()) return refused;
  const std::string origin = request.Header("origin");
  if (origin.empty()) return Status::Ok();  // neither header: not sent by a browser
  if (origin != "null" && HostOf(origin) == HostOf(request.own_origin)) return Status::Ok();
  return refused;
}

Status CheckJsonContentType(const HttpRequest& request) {
  if (SafeMethod(request.method) || request.body.empty()) return Status::Ok();
  std::string type = AsciiLower(request.Header("content-type"));
  type = std::string(Trim(std::string_view(type).substr(0, type.find(';'))));
  if (type == "application/json" || type == "multipart/form-data") return Status::Ok();
  return Status::InvalidArgument(
      "a request body signed in by cookie must be sent as Content-Type: application/json");
}

Result<accounts::User> Authenticate(accounts::Accounts& accounts, const HttpRequest& request) {
  std::string bearer;
  const std::string auth = request.Header("authorization");
  if (!auth.empty()) {
    if (auth.size() < 7 || (auth.compare(0, 7, "Bearer ") != 0 && auth.compare(0, 7, "bearer ") != 0))
      return Status::Unauthenticated("Authorization header must be 'Bearer <api key>'");
    bearer = std::string(Trim(std::string_view(auth).substr(7)));
    if (bearer.empty()) return Status::Unauthenticated("empty API key");
  }
  const std::string cookie = bearer.empty() ? SessionCookie(request) : "";
  if (!cookie.empty()) {
    RAGD_RETURN_IF_ERROR(CheckSameOrigin(request));
    RAGD_RETURN_IF_ERROR(CheckJsonContentType(request));
  }
  auto user = accounts.Authenticate(bearer, cookie);
  if (!user.ok()) {
    if (user.status().code() == StatusCode::kUnauthenticated) return user.status();
    if (user.status().code() == StatusCode::kNotFound ||
        user.status().code() == StatusCode::kPermissionDenied)
      return Status::Unauthenticated("invalid credentials");
    return user.status();
  }
  return user;
}

Status RequireAdmin(const accounts::User& user) {
  if (user.role != accounts::Role::kAdmin) return Status::PermissionDenied("this route needs the admin role");
  return Status::Ok();
}

}  // namespace ragd::app
