// The HTTP front door. Pistache lives only in http_server.cpp; handlers see
// plain HttpRequest/HttpResponse values and never block a reactor thread for
// long (streaming handlers hand a StreamWriter to another thread and return).
//
// Thread-safety: routes are registered before Start(); handlers run on the
// reactor threads, concurrently. Shutdown() may be called from any thread.
#pragma once

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
  std::string peer_address;

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

// Sends one streamed (chunked) response from any thread. Obtained from
// HttpServer::StartStream; Write() and End() only enqueue bytes on the
// connection's reactor, so they never block. After the client disconnects,
// Write() returns false and `cancelled()` becomes true.
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  virtual bool Write(const std::string& data) = 0;
  virtual void End() = 0;
  virtual bool cancelled() const = 0;
};

// A handler returns a response, or takes over the connection by calling
// `stream` (then its returned response is ignored).
using StreamStarter = std::function<std::shared_ptr<StreamWriter>(int status, const std::string& content_type,
                                                                    const std::vector<std::pair<std::string, std::string>>& headers)>;
using Handler = std::function<HttpResponse(const HttpRequest&, const StreamStarter& stream)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";    // address to listen on
  int port = 8080;                   // 0 picks a free port
  int threads = 4;                   // reactor threads
  size_t max_request_bytes = 1 << 20;  // whole request, headers and body
  int stream_timeout_s = 900;        // keep-alive limit, above the longest stream
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
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ragd::app
