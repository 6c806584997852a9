// Users (admin) and usage reports.
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

Json UsageJson(const accounts::User& user, const accounts::UsageReport& report) {
  Json days = Json::array();
  for (const auto& d : report.days)
    days.push_back({{"day", d.day}, {"prompt_tokens", d.prompt_tokens}, {"completion_tokens", d.completion_tokens},
                    {"requests", d.requests}, {"successful_answers", d.successful_answers}});
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
          {"used", used}};
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
    j["tokens_per_successful_answer"] = answers > 0 ? Json(static_cast<double>(tokens) / answers) : Json(nullptr);
    list.push_back(j);
  }
  return Json{{"users", list},
              {"total_tokens", all_tokens},
              {"successful_answers", all_answers},
              {"tokens_per_successful_answer",
               all_answers > 0 ? Json(static_cast<double>(all_tokens) / all_answers) : Json(nullptr)}};
}

}  // namespace

void RegisterUserRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/users", WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req, HttpExchange&,
                                                                              const accounts::User&) {
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
    if (r != "user" && r != "admin") return ErrorResponse(Status::InvalidArgument("field 'role' must be \"user\" or \"admin\""));
    nu.role = r == "admin" ? accounts::Role::kAdmin : accounts::Role::kUser;
    auto quota = OptionalInt(*body, "token_quota", 0, int64_t{1} << 50);
    if (!quota.ok()) return ErrorResponse(quota.status());
    nu.token_quota = *quota;
    auto user = ctx.accounts->users().Create(nu);
    if (!user.ok()) return ErrorResponse(user.status());
    auto key = ctx.accounts->api_keys().Create(user->id, "created with the user");
    if (!key.ok()) return ErrorResponse(key.status());
    return JsonResponse(201, {{"user", UserJson(*user, 0)}, {"api_key", key->key}});
  }));

  http.Route("GET", "/v1/users", WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest&, HttpExchange&,
                                                                             const accounts::User&) {
    auto users = ctx.accounts->users().List();
    if (!users.ok()) return ErrorResponse(users.status());
    Json list = Json::array();
    for (const auto& u : *users) {
      auto q = ctx.accounts->quota().GetStatus(u);
      list.push_back(UserJson(u, q.ok() ? q->used : 0));
    }
    return JsonResponse(200, {{"users", list}});
  }));

  http.Route("GET", "/v1/usage", WithUser(ctx, Access::kUser, false, [&ctx](const HttpRequest&, HttpExchange&,
                                                                            const accounts::User& user) {
    auto own = OwnUsage(ctx, user);
    if (!own.ok()) return ErrorResponse(own.status());
    if (user.role == accounts::Role::kAdmin) {  // admins also get the cost view over all users
      auto cost = CostView(ctx);
      if (!cost.ok()) return ErrorResponse(cost.status());
      (*own)["all_users"] = std::move(cost).value();
    }
    return JsonResponse(200, *own);
  }));

  http.Route("GET", "/v1/users/:id/usage", WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest& req,
                                                                                       HttpExchange&,
                                                                                       const accounts::User&) {
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
}

}  // namespace ragd::app
