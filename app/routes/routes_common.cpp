#include <chrono>

#include "app/http/auth.h"
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

// 503 while the models load, or for good when they failed; why they failed
// (file paths, library errors) is in the server log, not in the answer.
HttpResponse ModelsNotReady(const AppContext& ctx) {
  HttpResponse r = ctx.load_failed ? HttpResponse::Error(503, "unavailable_error",
                                                         "the models failed to load; the server log says why")
                                   : HttpResponse::Error(503, "unavailable_error", "the models are loading");
  r.headers.push_back({"Retry-After", "5"});
  return r;
}

}  // namespace

Handler WithUser(AppContext& ctx, Access access, bool needs_models, UserHandler handler) {
  return
      [&ctx, access, needs_models, handler = std::move(handler)](const HttpRequest& req, HttpExchange& ex) {
        auto user = Authenticate(*ctx.accounts, req);
        if (!user.ok()) return ErrorResponse(user.status());
        req.user_id = user->id;
        if (access == Access::kAdmin) {
          if (Status st = RequireAdmin(*user); !st.ok()) return ErrorResponse(st);
        }
        if (needs_models && !ctx.ready) return ModelsNotReady(ctx);
        return handler(req, ex, *user);
      };
}

void RegisterHealthRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("GET", "/healthz",
             [](const HttpRequest&, HttpExchange&) { return HttpResponse::Json(200, R"({"status":"ok"})"); });
  http.Route("GET", "/readyz", [&ctx](const HttpRequest&, HttpExchange&) {
    if (ctx.ready) {
      // A model whose upstream pool has no reachable endpoint cannot answer.
      for (const auto& llm : ctx.llms) {
        if (Status st = llm->generator->Health(); !st.ok()) {
          HttpResponse r = HttpResponse::Error(503, "unavailable_error", st.message());
          r.headers.push_back({"Retry-After", "5"});
          return r;
        }
      }
      return HttpResponse::Json(200, R"({"status":"ok"})");
    }
    return ModelsNotReady(ctx);
  });
  http.Route("GET", "/metrics", [&ctx](const HttpRequest&, HttpExchange&) {
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = ctx.metrics.Render();
    return r;
  });
}

}  // namespace ragd::app
