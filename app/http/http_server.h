// The HTTP front door. Pistache lives only in http_server.cpp; handlers see
// plain HttpRequest/HttpResponse values and never block a reactor thread for
// long (streaming handlers hand a StreamWriter to another thread and return).
//
// Thread-safety: routes are registered before Start(); handlers run on the
// reactor threads, concurrently. Shutdown() may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace ragd::app {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // without the query string
  std::map<std::string, std::string> params;   // path parameters (":id" -> value)
  std::map<std::string, std::string> query;    // decoded query parameters
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string peer_address;  // the client: the TCP peer, or the proxy's X-Forwarded-For entry when trusted
  // This server's origin as the client addressed it ("http://host:port"):
  // the scheme and Host header, or X-Forwarded-Proto/-Host when the proxy is
  // trusted. Compared with a browser's Origin header (app/http/auth.h).
  std::string own_origin;
  bool cookie_secure = false;  // session cookies sent on this request carry Secure and the __Host- name
  std::string request_id;      // X-Request-Id as sent (when well-formed) or generated; echoed back
  std::string route;           // the matched route pattern ("/v1/documents/:id"), "" when none matched
  // Who made the request, recorded by the authentication wrapper (0 = nobody
  // authenticated); read by the request log. Handlers run on one thread per
  // request, so this needs no lock.
  mutable int64_t user_id = 0;

  // Header value or "" (name in lower case).
  std::string Header(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  static HttpResponse Json(int status, std::string body);
  // {"error":{"code":status,"type":type,"message":message}}
  static HttpResponse Error(int status, const std::string& type, const std::string& message);
};

// A response finished later, from any thread, while the handler has returned
// and its reactor thread serves other connections. Obtained from
// HttpExchange; all methods only enqueue bytes on the connection, so they never
// block. After the client disconnects, writes return false and `cancelled()`
// becomes true (so the producer can stop work nobody will read).
class AsyncResponse {
 public:
  virtual ~AsyncResponse() = default;
  // One whole response (Content-Length framing). Once per AsyncResponse.
  virtual bool Send(const HttpResponse& response) = 0;
  // A chunked response: the head once, then chunks, then End().
  virtual bool StartStream(int status, const std::string& content_type,
                           const std::vector<std::pair<std::string, std::string>>& headers = {}) = 0;
  virtual bool Write(const std::string& data) = 0;
  virtual void End() = 0;
  virtual bool cancelled() const = 0;
  // Runs `on_cancel` once when the client goes away (at once if it already
  // has), or when the server stops the work behind the response
  // (HttpServer::InterruptDeferred; then `cancelled()` stays false and the
  // producer may still write how it ended), on whichever thread notices; it
  // must be quick and must not call back into this response. One hook per
  // response: a later call replaces it.
  virtual void OnCancel(std::function<void()> on_cancel) = 0;
};

// What a handler may do besides returning a response: take the connection
// over with Defer(); the HttpResponse the handler returns is then ignored.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  virtual std::shared_ptr<AsyncResponse> Defer() = 0;
  virtual bool deferred() const = 0;
  virtual const std::string& request_id() const = 0;
};

// When session cookies are marked Secure: kAuto when a trusted proxy reports
// that the client used TLS (X-Forwarded-Proto: https), or always, or never.
enum class SecureCookies { kAuto, kAlways, kNever };

using Handler = std::function<HttpResponse(const HttpRequest&, HttpExchange&)>;

// Called after every response the server sends itself (not for deferred
// ones, whose producers report their own ends), on a reactor thread.
using ResponseHook = std::function<void(const HttpRequest&, int status, double seconds)>;

// The body a route accepts. The server checks it from the request's
// headers, before any of the body is buffered (a declared Content-Length, a
// multipart type, a chunked body as it grows), and again on the whole body;
// max_request_bytes bounds what any request may buffer.
struct BodyLimit {
  size_t max_bytes = 0;    // 413 beyond this
  bool multipart = false;  // multipart/form-data accepted (uploads); else 415
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";       // address to listen on
  int port = 8080;                      // 0 picks a free port
  int threads = 4;                      // reactor threads
  size_t max_request_bytes = 32 << 20;  // whole request, headers and body: the largest any route accepts
  size_t max_json_bytes = 1 << 20;      // body of a POST/PUT/PATCH route without its own limit
  size_t max_bodyless_bytes = 4096;     // body of a GET/HEAD/DELETE route without its own limit
  // Routes with their own limit, by "METHOD pattern" ("POST /v1/documents").
  std::map<std::string, BodyLimit> body_limits;
  int max_connections = 4096;             // open connections at most; more are refused (503, closed)
  int max_connections_per_address = 128;  // from one client address (the TCP peer) at most
  int header_timeout_s = 30;              // a request's line and headers, on every request of a connection
  int body_timeout_s = 120;               // a request's whole body
  int stream_timeout_s = 900;             // longest a deferred response (a stream) may take
  bool trust_proxy = false;  // believe X-Forwarded-Proto/-Host/-For (set behind a proxy that overwrites them)
  SecureCookies secure_cookies = SecureCookies::kAuto;  // when HttpRequest::cookie_secure is set
  ResponseHook on_response;                             // metrics and the request log; may be empty
  // Origins whose pages may call the API (CORS): "https://app.example.com",
  // or "*" for any; empty = no CORS headers at all, preflights unanswered.
  std::vector<std::string> cors_origins;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();

  // Registers a route; `pattern` may hold ":name" segments.
  void Route(const std::string& method, const std::string& pattern, Handler handler);

  // Binds and starts serving on background threads.
  Status Start();
  // The bound port (useful with port 0).
  int port() const;
  // Requests being answered: handlers running, and deferred responses whose
  // last bytes are not yet written and whose client is still there. Any
  // thread; what a drain waits for before Shutdown().
  size_t InFlight() const;
  // Runs the OnCancel hook of every deferred response still pending, with
  // its connection left open, so that each producer stops its work and can
  // still tell its client why. Any thread.
  void InterruptDeferred();
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ragd::app
