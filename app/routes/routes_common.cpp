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

// 503 while the server drains before it stops (RagServer::BeginDrain): a
// client retries on another replica, which a load balancer that saw /readyz
// turn 503 picks.
HttpResponse Draining(const std::string& message) {
  HttpResponse r = HttpResponse::Error(503, "draining", message);
  r.headers.push_back({"Retry-After", "1"});
  return r;
}

// Compares in time independent of where the strings differ.
bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.size() + 1)]);
  return diff == 0;
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
        // What would start work (a generation, embeddings, an upload) is
        // refused while draining; reads still answer.
        if (needs_models && req.method == "POST" && ctx.draining)
          return Draining("this server is shutting down and takes no new work; retry on another replica");
        return handler(req, ex, *user);
      };
}

void RegisterHealthRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("GET", "/healthz",
             [](const HttpRequest&, HttpExchange&) { return HttpResponse::Json(200, R"({"status":"ok"})"); });
  http.Route("GET", "/readyz", [&ctx](const HttpRequest&, HttpExchange&) {
    if (ctx.draining) return Draining("this server is draining: it finishes the requests it has and stops");
    // A replica whose accounts database (PostgreSQL) is out of reach can
    // authenticate nobody.
    if (Status st = ctx.accounts->CheckStore(); !st.ok()) {
      HttpResponse r = HttpResponse::Error(503, "unavailable_error", st.message());
      r.headers.push_back({"Retry-After", "5"});
      return r;
    }
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
  // Public unless server.metrics_token is set: the figures name models,
  // routes and load, which a deployment may not want to show everyone.
  http.Route("GET", "/metrics", [&ctx](const HttpRequest& req, HttpExchange&) {
    const std::string& token = ctx.config.server.metrics_token;
    if (!token.empty() && !SameSecret(req.Header("authorization"), "Bearer " + token)) {
      HttpResponse r = HttpResponse::Error(401, "authentication_error",
                                           "/metrics needs Authorization: Bearer <server.metrics_token>");
      r.headers.push_back({"WWW-Authenticate", "Bearer"});
      return r;
    }
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = ctx.metrics.Render();
    return r;
  });
}

}  // namespace ragd::app
