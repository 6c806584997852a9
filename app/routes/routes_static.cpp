// The browser pages and their static files, served from the web/ folder.
#include <cstring>
#include <fstream>
#include <sstream>

#include "app/routes/routes.h"

namespace ragd::app {
namespace {

std::string ContentType(const std::string& name) {
  const auto ends = [&](const char* ext) { return name.size() >= std::strlen(ext) && name.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".ico")) return "image/x-icon";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

HttpResponse ServeFile(const std::string& web_dir, const std::string& name) {
  // Only plain names inside web/ (no "..", no hidden files, no absolute paths).
  if (name.empty() || name[0] == '.' || name[0] == '/' || name.find("..") != std::string::npos ||
      name.find('\\') != std::string::npos)
    return HttpResponse::Error(404, "not_found_error", "no such file");
  std::ifstream in(web_dir + "/" + name, std::ios::binary);
  if (!in) return HttpResponse::Error(404, "not_found_error", "no such file: " + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  HttpResponse r;
  r.content_type = ContentType(name);
  r.body = ss.str();
  r.headers.push_back({"Cache-Control", "no-cache"});
  r.headers.push_back({"X-Content-Type-Options", "nosniff"});
  if (name.ends_with(".html")) {
    r.headers.push_back({"Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                         "frame-ancestors 'none'"});
    r.headers.push_back({"X-Frame-Options", "DENY"});
  }
  return r;
}

}  // namespace

void RegisterStaticRoutes(HttpServer& http, AppContext& ctx) {
  const std::string dir = ctx.web_dir;
  http.Route("GET", "/", [dir](const HttpRequest&, HttpExchange&) { return ServeFile(dir, "index.html"); });
  http.Route("GET", "/login",
             [dir](const HttpRequest&, HttpExchange&) { return ServeFile(dir, "login.html"); });
  http.Route("GET", "/admin",
             [dir](const HttpRequest&, HttpExchange&) { return ServeFile(dir, "admin.html"); });
  http.Route("GET", "/static/:file", [dir](const HttpRequest& req, HttpExchange&) {
    return ServeFile(dir + "/static", req.params.at("file"));
  });
}

}  // namespace ragd::app
