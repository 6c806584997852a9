// Route registration, one function per group of routes (routes_*.cpp), and
// the wrappers every handler goes through: authentication, the admin role,
// model readiness, metrics.
#pragma once

#include <functional>

#include "app/http/http_server.h"
#include "app/http/json_request.h"
#include "app/services/app_context.h"

namespace ragd::app {

using UserHandler = std::function<HttpResponse(const HttpRequest&, HttpExchange&, const accounts::User&)>;

enum class Access {
  kUser,   // any signed-in user
  kAdmin,  // admins only (403 for users)
};

// Wraps `handler`: 401 without valid credentials, 403 for the wrong role,
// 503 while the models load (when `needs_models`), and, when `needs_models`,
// 503 "draining" for a POST (work to start) once the server drains.
Handler WithUser(AppContext& ctx, Access access, bool needs_models, UserHandler handler);

// Runs `work` (which hashes or checks a password) on ctx.password_pool and
// sends its response from there; the reactor thread returns at once. When
// the pool's backlog is full the answer is 503 with Retry-After and `work`
// never runs. Defined in routes_auth.cpp.
HttpResponse OnPasswordPool(AppContext& ctx, const HttpRequest& req, HttpExchange& ex,
                            std::function<HttpResponse()> work);

void RegisterHealthRoutes(HttpServer& http, AppContext& ctx);
void RegisterAuthRoutes(HttpServer& http, AppContext& ctx);
void RegisterUserRoutes(HttpServer& http, AppContext& ctx);
void RegisterDocumentRoutes(HttpServer& http, AppContext& ctx);
void RegisterOpenAiRoutes(HttpServer& http, AppContext& ctx);
void RegisterAskRoutes(HttpServer& http, AppContext& ctx);
void RegisterStaticRoutes(HttpServer& http, AppContext& ctx);
// The chat page's conversations, answer ratings and read-only library
// (routes_conversations.cpp, routes_feedback.cpp, routes_library.cpp).
void RegisterConversationRoutes(HttpServer& http, AppContext& ctx);
void RegisterFeedbackRoutes(HttpServer& http, AppContext& ctx);
void RegisterLibraryRoutes(HttpServer& http, AppContext& ctx);
// The admin page's system status (routes_admin.cpp).
void RegisterAdminRoutes(HttpServer& http, AppContext& ctx);

}  // namespace ragd::app
