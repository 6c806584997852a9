// Sign-in, sign-out, "who am I", and the user's own API keys.
//
// Sign-in is where passwords are guessed, so it is the guarded route: the
// browser's origin and content type are checked first (login CSRF: another
// site must not sign a victim into the attacker's account), then the backoff
// of the account name and the client address (429 with Retry-After, no
// hashing done), and only then is the Argon2id check handed to the password
// pool. Every failure is logged with the account name and the address.
#include <chrono>
#include <cstdio>

#include "app/http/auth.h"
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

Json UserJson(const accounts::User& u) {
  return {{"id", u.id}, {"username", u.username}, {"role", std::string(accounts::RoleName(u.role))}};
}

Json QuotaJson(const accounts::QuotaStatus& q) {
  return {{"limit", q.limit},
          {"used", q.used},
          {"reserved", q.reserved},
          {"remaining", q.remaining},
          {"period", std::string(accounts::PeriodName(q.period))},
          {"resets_at", q.resets_at}};
}

Json KeyJson(const accounts::ApiKeyInfo& k) {
  return {{"id", k.id}, {"prefix", k.prefix}, {"name", k.name}, {"created_at", k.created_at}};
}

// A client-chosen name made safe for one log line.
std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? c : '?';
  return out;
}

void LogSignIn(const HttpRequest& req, const std::string& account, const char* what) {
  std::fprintf(stderr, "ragd: sign-in %s: account \"%s\" from %s (request %s)\n", what,
               Printable(account).c_str(), Printable(req.peer_address).c_str(), req.request_id.c_str());
}

HttpResponse Throttled(int64_t wait_s) {
  HttpResponse r = HttpResponse::Error(
      429, "rate_limit_error", "too many failed sign-ins; try again in " + std::to_string(wait_s) + " s");
  r.headers.push_back({"Retry-After", std::to_string(wait_s)});
  return r;
}

HttpResponse SignIn(AppContext& ctx, const HttpRequest& req, const std::string& username,
                    const std::string& password) {
  accounts::LoginThrottle& throttle = ctx.accounts->login_throttle();
  // Checked again: others may have failed while this one waited in the pool.
  if (int64_t wait = throttle.RetryAfter(username, req.peer_address); wait > 0) {
    LogSignIn(req, username, "refused by backoff");
    return Throttled(wait);
  }
  auto session = ctx.accounts->sessions().Login(username, password);
  if (!session.ok()) {
    if (session.status().code() == StatusCode::kInternal || session.status().code() == StatusCode::kIoError)
      return ErrorResponse(session.status());
    throttle.RecordFailure(username, req.peer_address);
    LogSignIn(req, username, "failed");
    return HttpResponse::Error(401, "authentication_error", "wrong username or password");
  }
  throttle.RecordSuccess(username);
  HttpResponse r = JsonResponse(200, {{"user", UserJson(session->user)}});
  r.headers.push_back({"Set-Cookie", SetSessionCookie(req, session->token,
                                                      ctx.accounts->sessions().options().max_lifetime_s)});
  return r;
}

}  // namespace

HttpResponse OnPasswordPool(AppContext& ctx, const HttpRequest& req, HttpExchange& ex,
                            std::function<HttpResponse()> work) {
  auto response = ex.Defer();
  const RequestRecord record = RequestRecordOf(ex.request_id(), req.user_id, req.route);
  const auto started = std::chrono::steady_clock::now();
  auto finish = [&ctx, response, record, started](const HttpResponse& r) {
    response->Send(r);
    RecordDeferred(ctx, record, r.status, started);
  };
  const bool accepted = ctx.password_pool->TryPost([finish, work = std::move(work)]() mutable {
    HttpResponse r;
    try {
      r = work();
    } catch (const std::exception& e) {
      r = HttpResponse::Error(500, "server_error", std::string("internal error: ") + e.what());
    }
    finish(r);
  });
  if (!accepted) {
    HttpResponse r =
        HttpResponse::Error(503, "unavailable_error", "too many password checks in progress; try again");
    r.headers.push_back({"Retry-After", "1"});
    finish(r);
  }
  return HttpResponse::Json(202, "");
}

void RegisterAuthRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/auth/login", [&ctx](const HttpRequest& req, HttpExchange& ex) {
    if (Status st = CheckSameOrigin(req); !st.ok()) return ErrorResponse(st);
    const std::string type = req.Header("content-type");
    if (type.substr(0, type.find(';')) != "application/json")
      return ErrorResponse(Status::InvalidArgument("sign in with Content-Type: application/json"));
    auto body = ParseJsonObject(req.body);
    if (!body.ok()) return ErrorResponse(body.status());
    auto username = RequiredString(*body, "username", 256);
    if (!username.ok()) return ErrorResponse(username.status());
    auto password = RequiredString(*body, "password", 4096);
    if (!password.ok()) return ErrorResponse(password.status());
    if (int64_t wait = ctx.accounts->login_throttle().RetryAfter(*username, req.peer_address); wait > 0) {
      LogSignIn(req, *username, "refused by backoff");
      return Throttled(wait);
    }
    return OnPasswordPool(ctx, req, ex, [&ctx, req, username = *username, password = *password] {
      return SignIn(ctx, req, username, password);
    });
  });

  http.Route("POST", "/v1/auth/logout", [&ctx](const HttpRequest& req, HttpExchange&) {
    if (Status st = CheckSameOrigin(req); !st.ok()) return ErrorResponse(st);
    const std::string token = SessionCookie(req);
    if (!token.empty()) ctx.accounts->sessions().Logout(token);
    HttpResponse r = JsonResponse(200, {{"ok", true}});
    r.headers.push_back({"Set-Cookie", ClearSessionCookie(req)});
    return r;
  });

  http.Route("GET", "/v1/me",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest&, HttpExchange&, const accounts::User& user) {
                        auto quota = ctx.accounts->quota().GetStatus(user);
                        if (!quota.ok()) return ErrorResponse(quota.status());
                        Json j = UserJson(user);
                        j["quota"] = QuotaJson(*quota);
                        return JsonResponse(200, j);
                      }));

  // The caller's own API keys: list, make one more, revoke one.
  http.Route("GET", "/v1/me/keys",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest&, HttpExchange&, const accounts::User& user) {
                        auto keys = ctx.accounts->api_keys().List(user.id);
                        if (!keys.ok()) return ErrorResponse(keys.status());
                        Json list = Json::array();
                        for (const auto& k : *keys) list.push_back(KeyJson(k));
                        return JsonResponse(200, {{"keys", list}});
                      }));
  http.Route("POST", "/v1/me/keys",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        auto body =
                            req.body.empty() ? Result<Json>(Json::object()) : ParseJsonObject(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        auto name = OptionalString(*body, "name", 128);
                        if (!name.ok()) return ErrorResponse(name.status());
                        auto key = ctx.accounts->api_keys().Create(user.id, name->value_or(""));
                        if (!key.ok()) return ErrorResponse(key.status());
                        return JsonResponse(201, {{"key", KeyJson(key->info)}, {"api_key", key->key}});
                      }));
  http.Route("DELETE", "/v1/me/keys/:key_id",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        int64_t key_id = 0;
                        try {
                          key_id = std::stoll(req.params.at("key_id"));
                        } catch (...) {
                          return ErrorResponse(Status::InvalidArgument("key id must be a number"));
                        }
                        Status st = ctx.accounts->api_keys().Revoke(user.id, key_id);
                        return st.ok() ? JsonResponse(200, {{"revoked", true}}) : ErrorResponse(st);
                      }));
}

}  // namespace ragd::app
