// Sign-in, sign-out and "who am I".
#include "app/http/auth.h"
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

Json UserJson(const accounts::User& u) {
  return {{"id", u.id}, {"username", u.username}, {"role", std::string(accounts::RoleName(u.role))}};
}

Json QuotaJson(const accounts::QuotaStatus& q) {
  return {{"limit", q.limit}, {"used", q.used}, {"reserved", q.reserved}, {"remaining", q.remaining},
          {"period", std::string(accounts::PeriodName(q.period))}, {"resets_at", q.resets_at}};
}

}  // namespace

void RegisterAuthRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/auth/login", [&ctx](const HttpRequest& req, HttpExchange&) {
    auto body = ParseJsonObject(req.body);
    if (!body.ok()) return ErrorResponse(body.status());
    auto username = RequiredString(*body, "username", 256);
    if (!username.ok()) return ErrorResponse(username.status());
    auto password = RequiredString(*body, "password", 4096);
    if (!password.ok()) return ErrorResponse(password.status());
    auto session = ctx.accounts->sessions().Login(*username, *password);
    if (!session.ok()) {
      if (session.status().code() == StatusCode::kInternal || session.status().code() == StatusCode::kIoError)
        return ErrorResponse(session.status());
      return HttpResponse::Error(401, "authentication_error", "wrong username or password");
    }
    HttpResponse r = JsonResponse(200, {{"user", UserJson(session->user)}});
    r.headers.push_back({"Set-Cookie", std::string(kSessionCookie) + "=" + session->token +
                                           "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" +
                                           std::to_string(ctx.accounts->sessions().options().max_lifetime_s)});
    return r;
  });

  http.Route("POST", "/v1/auth/logout", [&ctx](const HttpRequest& req, HttpExchange&) {
    const std::string token = SessionCookie(req);
    if (!token.empty()) ctx.accounts->sessions().Logout(token);
    HttpResponse r = JsonResponse(200, {{"ok", true}});
    r.headers.push_back({"Set-Cookie", std::string(kSessionCookie) + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"});
    return r;
  });

  http.Route("GET", "/v1/me", WithUser(ctx, Access::kUser, false, [&ctx](const HttpRequest&, HttpExchange&,
                                                                           const accounts::User& user) {
    auto quota = ctx.accounts->quota().GetStatus(user);
    if (!quota.ok()) return ErrorResponse(quota.status());
    Json j = UserJson(user);
    j["quota"] = QuotaJson(*quota);
    return JsonResponse(200, j);
  }));
}

}  // namespace ragd::app
