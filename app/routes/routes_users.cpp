// Users (admin): create, list, change, disable, reset passwords, end
// sessions, manage keys; and usage reports. Password hashing runs on the
// password pool (OnPasswordPool), never on the HTTP thread.
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

Json UsageJson(const accounts::User& user, const accounts::UsageReport& report) {
  Json days = Json::array();
  for (const auto& d : report.days)
    days.push_back({{"day", d.day},
                    {"prompt_tokens", d.prompt_tokens},
                    {"completion_tokens", d.completion_tokens},
                    {"requests", d.requests},
                    {"successful_answers", d.successful_answers}});
  return {{"user_id", user.id},
          {"username", user.username},
          {"period", std::string(accounts::PeriodName(report.quota.period))},
          {"limit", report.quota.limit},
          {"used", report.quota.used},
          {"reserved", report.quota.reserved},
          {"remaining", report.quota.remaining},
          {"resets_at", report.quota.resets_at},
          {"days", days}};
}

Json UserJson(const accounts::User& u, int64_t used) {
  return {{"id", u.id},
          {"username", u.username},
          {"role", std::string(accounts::RoleName(u.role))},
          {"token_quota", u.token_quota ? Json(*u.token_quota) : Json(nullptr)},
          {"created_at", u.created_at},
          {"disabled", u.disabled},
          {"used", used}};
}

Json KeyJson(const accounts::ApiKeyInfo& k) {
  return {{"id", k.id}, {"prefix", k.prefix}, {"name", k.name}, {"created_at", k.created_at}};
}

Result<int64_t> IdParam(const HttpRequest& req, const char* name) {
  try {
    return static_cast<int64_t>(std::stoll(req.params.at(name)));
  } catch (...) {
    return Status::InvalidArgument(std::string(name) + " must be a number");
  }
}

// The user named by the ":id" path segment.
Result<accounts::User> PathUser(AppContext& ctx, const HttpRequest& req) {
  auto id = IdParam(req, "id");
  if (!id.ok()) return id.status();
  return ctx.accounts->users().Get(*id);
}

// PATCH /v1/users/:id: each field present is applied, in this order.
Status ApplyUserChanges(AppContext& ctx, int64_t id, const Json& body) {
  for (const auto& [name, value] : body.items())
    if (name != "disabled" && name != "role" && name != "token_quota")
      return Status::InvalidArgument("unknown field '" + name + "' (disabled, role, token_quota)");
  if (body.contains("token_quota")) {
    auto quota = OptionalInt(body, "token_quota", 0, int64_t{1} << 50);  // null: back to the default
    if (!quota.ok()) return quota.status();
    RAGD_RETURN_IF_ERROR(ctx.accounts->users().SetTokenQuota(id, *quota));
  }
  if (body.contains("role")) {
    auto role = RequiredString(body, "role", 16);
    if (!role.ok()) return role.status();
    auto parsed = accounts::ParseRole(*role);
    if (!parsed.ok()) return Status::InvalidArgument("field 'role' must be \"user\" or \"admin\"");
    RAGD_RETURN_IF_ERROR(ctx.accounts->SetRole(id, *parsed));
  }
  if (body.contains("disabled")) {
    auto disabled = OptionalBool(body, "disabled");
    if (!disabled.ok()) return disabled.status();
    if (!disabled->has_value()) return Status::InvalidArgument("field 'disabled' must be true or false");
    RAGD_RETURN_IF_ERROR(ctx.accounts->SetDisabled(id, **disabled));
  }
  return Status::Ok();
}

Result<Json> OwnUsage(AppContext& ctx, const accounts::User& user) {
  auto report = ctx.accounts->quota().GetUsage(user);
  if (!report.ok()) return report.status();
  return UsageJson(user, *report);
}

// The admin's cost view: every user's tokens per day over the last 31 days
// and the tokens spent per successful answer (failed and cancelled requests
// cost tokens too, so they raise the ratio).
Result<Json> CostView(AppContext& ctx) {
  auto users = ctx.accounts->users().List();
  if (!users.ok()) return users.status();
  Json list = Json::array();
  int64_t all_tokens = 0, all_answers = 0;
  for (const auto& u : *users) {
    auto report = ctx.accounts->quota().GetUsage(u);
    if (!report.ok()) return report.status();
    int64_t tokens = 0, answers = 0, requests = 0;
    for (const auto& d : report->days) {
      tokens += d.prompt_tokens + d.completion_tokens;
      answers += d.successful_answers;
      requests += d.requests;
    }
    all_tokens += tokens;
    all_answers += answers;
    Json j = UsageJson(u, *report);
    j["total_tokens"] = tokens;
    j["requests"] = requests;
    j["successful_answers"] = answers;
    j["tokens_per_successful_answer"] =
        answers > 0 ? Json(static_cast<double>(tokens) / answers) : Json(nullptr);
    list.push_back(j);
  }
  return Json{{"users", list},
              {"total_tokens", all_tokens},
              {"successful_answers", all_answers},
              {"tokens_per_successful_answer",
               all_answers > 0 ? Json(static_cast<double>(all_tokens) / all_answers) : Json(nullptr)}};
}

// Revocation and account changes (admin).
void RegisterUserAdminRoutes(HttpServer& http, AppContext& ctx) {
  using accounts::User;
  http.Route("PATCH", "/v1/users/:id",
             WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req, HttpExchange&, const User&) {
               auto user = PathUser(ctx, req);
               if (!user.ok()) return ErrorResponse(user.status());
               auto body = ParseJsonObject(req.body);
               if (!body.ok()) return ErrorResponse(body.status());
               if (Status st = ApplyUserChanges(ctx, user->id, *body); !st.ok()) return ErrorResponse(st);
               auto changed = ctx.accounts->users().Get(user->id);
               if (!changed.ok()) return ErrorResponse(changed.status());
               auto q = ctx.accounts->quota().GetStatus(*changed);
               return JsonResponse(200, {{"user", UserJson(*changed, q.ok() ? q->used : 0)}});
             }));

  http.Route(
      "POST", "/v1/users/:id/password",
      WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req, HttpExchange& ex, const User&) {
        auto user = PathUser(ctx, req);
        if (!user.ok()) return ErrorResponse(user.status());
        auto body = ParseJsonObject(req.body);
        if (!body.ok()) return ErrorResponse(body.status());
        auto password = RequiredString(*body, "password", 1024);
        if (!password.ok()) return ErrorResponse(password.status());
        if (Status st = accounts::ValidatePassword(*password); !st.ok()) return ErrorResponse(st);
        return OnPasswordPool(ctx, req, ex, [&ctx, id = user->id, password = *password] {
          Status st = ctx.accounts->ResetPassword(id, password);
          return st.ok() ? JsonResponse(200, {{"ok", true}}) : ErrorResponse(st);
        });
      }));

  http.Route("DELETE", "/v1/users/:id/sessions",
             WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req, HttpExchange&, const User&) {
               auto user = PathUser(ctx, req);
               if (!user.ok()) return ErrorResponse(user.status());
               Status st = ctx.accounts->sessions().LogoutAll(user->id);
               return st.ok() ? JsonResponse(200, {{"ok", true}}) : ErrorResponse(st);
             }));

  http.Route("GET", "/v1/users/:id/keys",
             WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req, HttpExchange&, const User&) {
               auto user = PathUser(ctx, req);
               if (!user.ok()) return ErrorResponse(user.status());
               auto keys = ctx.accounts->api_keys().List(user->id);
               if (!keys.ok()) return ErrorResponse(keys.status());
               Json list = Json::array();
               for (const auto& k : *keys) list.push_back(KeyJson(k));
               return JsonResponse(200, {{"keys", list}});
             }));

  http.Route("POST", "/v1/users/:id/keys",
             WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req, HttpExchange&, const User&) {
               auto user = PathUser(ctx, req);
               if (!user.ok()) return ErrorResponse(user.status());
               auto body = req.body.empty() ? Result<Json>(Json::object()) : ParseJsonObject(req.body);
               if (!body.ok()) return ErrorResponse(body.status());
               auto name = OptionalString(*body, "name", 128);
               if (!name.ok()) return ErrorResponse(name.status());
               auto key = ctx.accounts->api_keys().Create(user->id, name->value_or(""));
               if (!key.ok()) return ErrorResponse(key.status());
               return JsonResponse(201, {{"key", KeyJson(key->info)}, {"api_key", key->key}});
             }));

  http.Route("DELETE", "/v1/users/:id/keys/:key_id",
             WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req, HttpExchange&, const User&) {
               auto user = PathUser(ctx, req);
               if (!user.ok()) return ErrorResponse(user.status());
               auto key_id = IdParam(req, "key_id");
               if (!key_id.ok()) return ErrorResponse(key_id.status());
               Status st = ctx.accounts->api_keys().Revoke(user->id, *key_id);
               return st.ok() ? JsonResponse(200, {{"revoked", true}}) : ErrorResponse(st);
             }));
}

}  // namespace

void RegisterUserRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/users",
             WithUser(ctx, Access::kAdmin, false,
                      [&ctx](const HttpRequest& req, HttpExchange& ex, const accounts::User&) {
                        auto body = ParseJsonObject(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        accounts::NewUser nu;
                        auto username = RequiredString(*body, "username", 64);
                        if (!username.ok()) return ErrorResponse(username.status());
                        nu.username = *username;
                        auto password = OptionalString(*body, "password", 1024);
                        if (!password.ok()) return ErrorResponse(password.status());
                        nu.password = password->value_or("");
                        auto role = OptionalString(*body, "role", 16);
                        if (!role.ok()) return ErrorResponse(role.status());
                        const std::string r = role->value_or("user");
                        if (r != "user" && r != "admin")
                          return ErrorResponse(
                              Status::InvalidArgument("field 'role' must be \"user\" or \"admin\""));
                        nu.role = r == "admin" ? accounts::Role::kAdmin : accounts::Role::kUser;
                        auto quota = OptionalInt(*body, "token_quota", 0, int64_t{1} << 50);
                        if (!quota.ok()) return ErrorResponse(quota.status());
                        nu.token_quota = *quota;
                        auto create = [&ctx, nu] {
                          auto user = ctx.accounts->users().Create(nu);
                          if (!user.ok()) return ErrorResponse(user.status());
                          auto key = ctx.accounts->api_keys().Create(user->id, "created with the user");
                          if (!key.ok()) return ErrorResponse(key.status());
                          return JsonResponse(201, {{"user", UserJson(*user, 0)}, {"api_key", key->key}});
                        };
                        return nu.password.empty() ? create() : OnPasswordPool(ctx, req, ex, create);
                      }));

  http.Route(
      "GET", "/v1/users",
      WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        auto users = ctx.accounts->users().List();
        if (!users.ok()) return ErrorResponse(users.status());
        Json list = Json::array();
        for (const auto& u : *users) {
          auto q = ctx.accounts->quota().GetStatus(u);
          list.push_back(UserJson(u, q.ok() ? q->used : 0));
        }
        return JsonResponse(200, {{"users", list}});
      }));

  http.Route(
      "GET", "/v1/usage",
      WithUser(ctx, Access::kUser, false,
               [&ctx](const HttpRequest&, HttpExchange&, const accounts::User& user) {
                 auto own = OwnUsage(ctx, user);
                 if (!own.ok()) return ErrorResponse(own.status());
                 if (user.role == accounts::Role::kAdmin) {  // admins also get the cost view over all users
                   auto cost = CostView(ctx);
                   if (!cost.ok()) return ErrorResponse(cost.status());
                   (*own)["all_users"] = std::move(cost).value();
                 }
                 return JsonResponse(200, *own);
               }));

  http.Route("GET", "/v1/users/:id/usage",
             WithUser(ctx, Access::kAdmin, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
                        int64_t id = 0;
                        try {
                          id = std::stoll(req.params.at("id"));
                        } catch (...) {
                          return ErrorResponse(Status::InvalidArgument("user id must be a number"));
                        }
                        auto user = ctx.accounts->users().Get(id);
                        if (!user.ok()) return ErrorResponse(user.status());
                        auto usage = OwnUsage(ctx, *user);
                        return usage.ok() ? JsonResponse(200, *usage) : ErrorResponse(usage.status());
                      }));

  RegisterUserAdminRoutes(http, ctx);
}

}  // namespace ragd::app
