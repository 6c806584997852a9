#include "app/http/auth.h"

#include "common/text.h"

namespace ragd::app {

std::string SessionCookie(const HttpRequest& request) {
  const std::string cookies = request.Header("cookie");
  const std::string prefix = std::string(kSessionCookie) + "=";
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

Result<accounts::User> Authenticate(accounts::Accounts& accounts, const HttpRequest& request) {
  std::string bearer;
  const std::string auth = request.Header("authorization");
  if (!auth.empty()) {
    if (auth.size() < 7 || (auth.compare(0, 7, "Bearer ") != 0 && auth.compare(0, 7, "bearer ") != 0))
      return Status::Unauthenticated("Authorization header must be 'Bearer <api key>'");
    bearer = std::string(Trim(std::string_view(auth).substr(7)));
    if (bearer.empty()) return Status::Unauthenticated("empty API key");
  }
  auto user = accounts.Authenticate(bearer, bearer.empty() ? SessionCookie(request) : "");
  if (!user.ok()) {
    if (user.status().code() == StatusCode::kUnauthenticated) return user.status();
    if (user.status().code() == StatusCode::kNotFound || user.status().code() == StatusCode::kPermissionDenied)
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
