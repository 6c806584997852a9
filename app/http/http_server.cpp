// Pistache 0.0.5 adapter. Facts this file relies on (verified against the
// Debian package): ResponseStream must not be written off the reactor thread,
// so streams write raw HTTP/1.1 chunks through Tcp::Peer::send(), which only
// enqueues on the reactor's write queue and is safe from any thread; a peer
// marked idle is not cut by the header/body timeouts; disconnects are seen in
// Tcp::Handler::onDisconnection.
#include "app/http/http_server.h"

#include <pistache/endpoint.h>
#include <pistache/http.h>
#include <pistache/peer.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <unordered_map>

#include "common/text.h"

namespace ragd::app {

namespace Http = Pistache::Http;
namespace Tcp = Pistache::Tcp;

std::string HttpRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Error(int status, const std::string& type, const std::string& message) {
  nlohmann::json j = {{"error", {{"code", status}, {"type", type}, {"message", message}}}};
  return Json(status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Client-chosen request ids are echoed only when short and plain.
bool ValidRequestId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != ':')
      return false;
  return true;
}

std::string NewRequestId() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[40];
  std::snprintf(buf, sizeof buf, "req-%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffu));
  return buf;
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

// The last entry of a comma-separated header: the one the nearest proxy added.
std::string LastListItem(const std::string& value) {
  const size_t comma = value.rfind(',');
  return std::string(
      Trim(comma == std::string::npos ? std::string_view(value) : std::string_view(value).substr(comma + 1)));
}

// Fills the fields that depend on where the client connected from and how.
void ResolveClient(const HttpServerOptions& options, HttpRequest* req) {
  bool tls = false;
  std::string host = req->Header("host");
  if (options.trust_proxy) {
    tls = AsciiLower(LastListItem(req->Header("x-forwarded-proto"))) == "https";
    if (std::string fwd = LastListItem(req->Header("x-forwarded-host")); !fwd.empty()) host = fwd;
    if (std::string fwd = LastListItem(req->Header("x-forwarded-for")); !fwd.empty()) req->peer_address = fwd;
  }
  req->own_origin = (tls ? "https://" : "http://") + AsciiLower(host);
  req->cookie_secure = options.secure_cookies == SecureCookies::kAlways ||
                       (options.secure_cookies == SecureCookies::kAuto && tls);
}

// Headers every response carries unless the handler set its own: the body
// is never sniffed into another type, and API answers (per user, often
// secret) are never stored by a browser or proxy cache.
std::string SafetyHeaders(const std::vector<std::pair<std::string, std::string>>& headers) {
  bool nosniff = false, cache = false;
  for (const auto& [k, v] : headers) {
    const std::string name = AsciiLower(k);
    nosniff = nosniff || name == "x-content-type-options";
    cache = cache || name == "cache-control";
  }
  std::string out;
  if (!nosniff) out += "X-Content-Type-Options: nosniff\r\n";
  if (!cache) out += "Cache-Control: no-store\r\n";
  return out;
}

// A server error's message may hold internal detail (a file path, a
// library's error text): it goes to the log with the request id, and the
// client gets the request id to quote instead.
HttpResponse WithoutInternals(const HttpResponse& r, const std::string& request_id) {
  if (r.status < 500 || r.status == 503) return r;
  std::fprintf(stderr, "ragd: %s: %d %s\n", request_id.c_str(), r.status, r.body.c_str());
  HttpResponse out =
      HttpResponse::Error(r.status, "server_error",
                          "internal error; the server log has the details under request id " + request_id);
  out.headers = r.headers;
  return out;
}

struct Route {
  std::string name;  // the pattern as registered
  std::string method;
  std::vector<std::string> pattern;
  Handler handler;
};

// A deferred response written as raw HTTP/1.1 bytes through the peer's write
// queue (safe from any thread in Pistache 0.0.5, unlike ResponseStream).
//
// A deferred response closes its connection once written (Connection:
// close): the connection was exempt from Pistache's header timeout while the
// answer was produced, and Pistache offers no way to restart that timer from
// another thread, so the next request comes on a fresh connection, under the
// header timeout like every first request. A new connection costs little
// beside a generation.
//
// A deferred response counts as one request in flight (HttpServer::InFlight)
// until its last bytes are written (not merely queued: a drain that ends
// then may shut the reactors down) or its client goes away.
class PeerResponse : public AsyncResponse, public std::enable_shared_from_this<PeerResponse> {
 public:
  // `extra_head`: header lines every response on this exchange carries (CORS).
  // `in_flight`: the counter this response holds one of until it finishes;
  // null for responses sent at once.
  PeerResponse(std::shared_ptr<Tcp::Peer> peer, std::string request_id, bool close_after,
               std::string extra_head = "", std::shared_ptr<std::atomic<size_t>> in_flight = nullptr)
      : peer_(std::move(peer)),
        request_id_(std::move(request_id)),
        extra_head_(std::move(extra_head)),
        close_after_(close_after),
        in_flight_(std::move(in_flight)) {
    if (in_flight_) ++*in_flight_;
  }
  ~PeerResponse() override { Finished(); }

  // The bytes of a whole response.
  static std::string Serialize(const HttpResponse& response, const std::string& request_id,
                               const std::string& extra_head, bool close) {
    const HttpResponse r = WithoutInternals(response, request_id);
    std::string head = StatusLine(r.status) + "Content-Type: " + r.content_type +
                       "\r\nContent-Length: " + std::to_string(r.body.size()) +
                       "\r\nX-Request-Id: " + request_id + "\r\n" + extra_head + SafetyHeaders(r.headers) +
                       (close ? "Connection: close\r\n" : "");
    for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
    return head + "\r\n" + r.body;
  }

  bool Send(const HttpResponse& response) override {
    ended_ = true;
    return SendRaw(Serialize(response, request_id_, extra_head_, close_after_), /*last=*/true);
  }
  bool StartStream(int status, const std::string& content_type,
                   const std::vector<std::pair<std::string, std::string>>& headers) override {
    std::string head =
        StatusLine(status) + "Content-Type: " + content_type +
        "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Accel-Buffering: no\r\n"
        "Transfer-Encoding: chunked\r\nX-Request-Id: " +
        request_id_ + "\r\n" + extra_head_ + (close_after_ ? "Connection: close\r\n" : "");
    for (const auto& [k, v] : headers) head += k + ": " + v + "\r\n";
    return SendRaw(head + "\r\n");
  }
  bool Write(const std::string& data) override {
    if (data.empty()) return !cancelled();
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return SendRaw(size + data + "\r\n");
  }
  void End() override {
    if (!ended_.exchange(true)) SendRaw("0\r\n\r\n", /*last=*/true);
  }
  bool cancelled() const override { return cancelled_.load(); }
  void OnCancel(std::function<void()> on_cancel) override {
    {
      std::lock_guard<std::mutex> lock(hook_mu_);
      if (!cancelled()) {
        on_cancel_ = std::move(on_cancel);
        return;
      }
    }
    on_cancel();
  }
  // The client has gone.
  void Cancel() {
    std::function<void()> hook;
    {
      std::lock_guard<std::mutex> lock(hook_mu_);
      cancelled_ = true;
      hook = std::move(on_cancel_);
    }
    Finished();
    if (hook) hook();
  }
  // The server stops the producer; the client may still be told why.
  void Interrupt() {
    std::function<void()> hook;
    {
      std::lock_guard<std::mutex> lock(hook_mu_);
      hook = std::move(on_cancel_);
    }
    if (hook) hook();
  }

 private:
  static std::string StatusLine(int status) {
    return "HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) + "\r\n";
  }
  void Finished() {
    if (in_flight_ && !finished_.exchange(true)) --*in_flight_;
  }

  // `last`: the response's last bytes; once written (on the reactor thread
  // that writes them) the response stops counting as in flight and, with
  // close_after_, the connection is shut down, which makes Pistache close it.
  bool SendRaw(const std::string& bytes, bool last = false) {
    if (cancelled()) return false;
    std::lock_guard<std::mutex> lock(mu_);  // keeps the pieces of one response in order
    auto sent = peer_->send(Pistache::RawBuffer(bytes, bytes.size()));
    if (last && (close_after_ || in_flight_)) {  // else nothing waits for the write (nor owns *this)
      // The callback may run at once on this thread (the write already
      // done), after the client closed and its descriptor was reused: only a
      // response not yet cancelled (Cancel runs before Pistache closes the
      // descriptor) still owns it.
      auto self = shared_from_this();
      const auto written = [self] {
        {
          std::lock_guard<std::mutex> lock(self->hook_mu_);
          if (self->close_after_ && !self->cancelled_) ::shutdown(self->peer_->fd(), SHUT_RDWR);
        }
        self->Finished();
      };
      sent.then([written](ssize_t) { written(); }, [written](std::exception_ptr&) { written(); });
    }
    return true;
  }

  std::shared_ptr<Tcp::Peer> peer_;
  std::string request_id_;
  std::string extra_head_;
  const bool close_after_;
  const std::shared_ptr<std::atomic<size_t>> in_flight_;
  std::atomic<bool> finished_{false};  // in_flight_ no longer counts this response
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> ended_{false};
  std::mutex mu_;
  std::mutex hook_mu_;               // orders OnCancel against Cancel
  std::function<void()> on_cancel_;  // GUARDED_BY(hook_mu_)
};

// CORS (off unless origins are configured): a browser page from an allowed
// origin may call the API with its API key. Credentials (the session cookie)
// are never allowed cross-origin, so a foreign page cannot act as a signed-in
// user; preflights are answered for any route that exists.
bool CorsAllowed(const HttpServerOptions& options, const std::string& origin) {
  if (origin.empty() || origin == "null") return false;
  for (const std::string& o : options.cors_origins)
    if (o == "*" || o == origin) return true;
  return false;
}

std::string CorsHead(const std::string& origin) {
  return "Access-Control-Allow-Origin: " + origin +
         "\r\nVary: Origin\r\nAccess-Control-Expose-Headers: X-Request-Id, Retry-After\r\n";
}

HttpResponse Preflight(const HttpRequest& req) {
  HttpResponse r;
  r.status = 204;
  r.headers.push_back({"Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE"});
  std::string asked = req.Header("access-control-request-headers");
  asked.erase(std::remove_if(asked.begin(), asked.end(), [](char c) { return c == '\r' || c == '\n'; }),
              asked.end());
  r.headers.push_back(
      {"Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked});
  r.headers.push_back({"Access-Control-Max-Age", "600"});
  return r;
}

struct Shared {
  std::vector<Route> routes;
  // Requests being answered (HttpServer::InFlight): each onRequest while it
  // runs, and each deferred response until it finishes.
  const std::shared_ptr<std::atomic<size_t>> in_flight = std::make_shared<std::atomic<size_t>>(0);
  std::mutex streams_mu;
  std::unordered_map<size_t, std::weak_ptr<PeerResponse>> streams;  // by peer id

  // Open connections, in total and by client address (every reactor thread's
  // handler shares these).
  std::mutex conns_mu;
  size_t open = 0;                                          // GUARDED_BY(conns_mu)
  std::unordered_map<std::string, int> by_address;          // GUARDED_BY(conns_mu)
  std::unordered_map<size_t, std::string> counted_address;  // GUARDED_BY(conns_mu): peer id -> address

  // Counts a new connection; false (nothing counted) when a cap is reached.
  // `address` "" is not capped on its own (behind a trusted proxy every
  // connection comes from the proxy).
  bool OpenConnection(size_t peer_id, const std::string& address, const HttpServerOptions& o) {
    std::lock_guard<std::mutex> lock(conns_mu);
    if (o.max_connections > 0 && open >= static_cast<size_t>(o.max_connections)) return false;
    if (!address.empty()) {
      int& n = by_address[address];
      if (o.max_connections_per_address > 0 && n >= o.max_connections_per_address) {
        if (n == 0) by_address.erase(address);
        return false;
      }
      ++n;
    }
    ++open;
    counted_address[peer_id] = address;
    return true;
  }
  void CloseConnection(size_t peer_id) {
    std::lock_guard<std::mutex> lock(conns_mu);
    auto it = counted_address.find(peer_id);
    if (it == counted_address.end()) return;
    if (!it->second.empty()) {
      auto a = by_address.find(it->second);
      if (a != by_address.end() && --a->second <= 0) by_address.erase(a);
    }
    counted_address.erase(it);
    --open;
  }

  // Finds a route; sets `method_mismatch` when the path exists for another method.
  const Route* Match(const std::string& method, const std::string& path,
                     std::map<std::string, std::string>* params, bool* method_mismatch) const {
    const std::vector<std::string> parts = SplitPath(path);
    for (const Route& r : routes) {
      if (r.pattern.size() != parts.size()) continue;
      std::map<std::string, std::string> p;
      bool ok = true;
      for (size_t i = 0; i < parts.size() && ok; ++i) {
        if (!r.pattern[i].empty() && r.pattern[i][0] == ':')
          p[r.pattern[i].substr(1)] = PercentDecode(parts[i]);
        else if (r.pattern[i] == "*")
          p["*"] = parts[i];
        else
          ok = r.pattern[i] == parts[i];
      }
      if (!ok) continue;
      if (r.method != method) {
        *method_mismatch = true;
        continue;
      }
      *params = std::move(p);
      return &r;
    }
    return nullptr;
  }
};

class Exchange : public HttpExchange {
 public:
  Exchange(Shared* shared, std::shared_ptr<Tcp::Peer> peer, std::string request_id, std::string extra_head)
      : shared_(shared),
        peer_(std::move(peer)),
        request_id_(std::move(request_id)),
        extra_head_(std::move(extra_head)) {}

  std::shared_ptr<AsyncResponse> Defer() override {
    if (response_) return response_;
    response_ = std::make_shared<PeerResponse>(peer_, request_id_, /*close_after=*/true, extra_head_,
                                               shared_->in_flight);
    {
      std::lock_guard<std::mutex> lock(shared_->streams_mu);
      shared_->streams[peer_->getID()] = response_;
    }
    peer_->setIdle(true);  // no header/body timeout while the response is pending
    return response_;
  }
  bool deferred() const override { return response_ != nullptr; }
  const std::string& request_id() const override { return request_id_; }

  // Answers at once, on the reactor thread: nothing to cancel, so the
  // response is not registered for disconnect notices.
  // The connection stays under Pistache's header timeout (not marked idle),
  // which restarts when this request's parser is reset: the next request on
  // it must bring its headers in time too, and a connection left open
  // without one is closed after the header timeout.
  void SendNow(const HttpResponse& r) {
    PeerResponse(peer_, request_id_, /*close_after=*/false, extra_head_).Send(r);
  }

 private:
  Shared* shared_;
  std::shared_ptr<Tcp::Peer> peer_;
  std::string request_id_;
  std::string extra_head_;
  std::shared_ptr<PeerResponse> response_;
};

// The body `route` accepts for `method` (route null: none matched).
BodyLimit LimitFor(const HttpServerOptions& options, const Route* route, const std::string& method) {
  if (route != nullptr) {
    auto it = options.body_limits.find(method + " " + route->name);
    if (it != options.body_limits.end()) return it->second;
  }
  const bool bodyless = method == "GET" || method == "HEAD" || method == "DELETE" || method == "OPTIONS";
  return {bodyless ? options.max_bodyless_bytes : options.max_json_bytes, false};
}

HttpResponse TooLarge(size_t size, const BodyLimit& limit, const std::string& method, const Route* route,
                      const std::string& path) {
  return HttpResponse::Error(413, "invalid_request_error",
                             "request body of " + std::to_string(size) + " bytes is larger than the " +
                                 std::to_string(limit.max_bytes) + " bytes " + method + " " +
                                 (route ? route->name : path) + " accepts");
}

HttpResponse MultipartOffRoute() {
  return HttpResponse::Error(415, "invalid_request_error",
                             "multipart bodies are accepted only by the upload route (POST /v1/documents)");
}

bool IsMultipart(const std::string& content_type) {
  return AsciiLower(content_type).rfind("multipart/", 0) == 0;
}

// The request parser of one connection, with a gate in front of each of
// Pistache's parsing steps (request line, headers, body). Pistache buffers a
// request up to one size for every connection (the largest any route
// accepts); the gate refuses a request as soon as what it has read shows
// the request is too large for its route: headers beyond kMaxHeadBytes, a
// Content-Length over the route's limit, a multipart body off the upload
// route, or a chunked body grown past the limit. The refusal is answered at
// once and the connection closed; bytes still arriving are counted and
// dropped, never parsed, and past kLingerBytes the connection is cut.
class GatedParser : public Http::RequestParser {
 public:
  // Bytes the request line and headers may take together.
  static constexpr size_t kMaxHeadBytes = 64 << 10;
  // Bytes read and dropped after a refusal, so that a client still sending
  // its body can read the refusal before the connection ends.
  static constexpr size_t kLingerBytes = 1 << 20;

  GatedParser(size_t max_request_bytes, std::shared_ptr<const Shared> shared,
              std::shared_ptr<const HttpServerOptions> options, std::weak_ptr<Tcp::Peer> peer)
      : Http::RequestParser(max_request_bytes),
        shared_(std::move(shared)),
        options_(std::move(options)),
        peer_(std::move(peer)) {
    for (auto& step : allSteps) step = std::make_unique<Gate>(this, std::move(step));
  }

  // After every request (answered, or refused by Pistache).
  void reset() override {
    Http::RequestParser::reset();
    answered_before_ = true;
    body_checked_ = false;
    limit_ = {};
  }

 private:
  class Gate : public Http::Private::Step {
   public:
    Gate(GatedParser* parser, std::unique_ptr<Http::Private::Step> inner)
        : Step(&parser->request), parser_(parser), inner_(std::move(inner)) {}
    // Pistache's timeouts tell the header phase from the body by the id.
    Http::Private::StepId id() const override { return inner_->id(); }
    Http::Private::State apply(Pistache::StreamCursor& cursor) override {
      return parser_->Apply(*inner_, cursor);
    }

   private:
    GatedParser* parser_;
    std::unique_ptr<Http::Private::Step> inner_;
  };

  Http::Private::State Apply(Http::Private::Step& step, Pistache::StreamCursor& cursor) {
    using Http::Private::State;
    if (refused_) return Drop(cursor);
    if (step.id() != Http::Private::BodyStep::Id) {
      State state;
      try {
        state = step.apply(cursor);
      } catch (const Http::HttpError&) {
        throw;  // Pistache answers its own parse errors (400)
      } catch (const std::exception&) {
        // A header value Pistache cannot convert (a Content-Length past
        // 2^64) throws from its parser, which would leave the request hanging.
        return Refuse(HttpResponse::Error(400, "invalid_request_error", "malformed request headers"), cursor);
      }
      // Unfinished steps rewind the cursor: position + remaining is all the
      // request has buffered so far.
      if (state == State::Again && cursor + cursor.remaining() > kMaxHeadBytes)
        return Refuse(HttpResponse::Error(431, "invalid_request_error",
                                          "request line and headers are larger than " +
                                              std::to_string(kMaxHeadBytes) + " bytes"),
                      cursor);
      return state;
    }
    if (!body_checked_) {
      body_checked_ = true;
      std::optional<HttpResponse> refusal = CheckHead();
      if (refusal) return Refuse(*refusal, cursor);
    }
    const State state = step.apply(cursor);
    if (state == State::Again && request.body().size() > limit_.max_bytes)
      return Refuse(TooLarge(request.body().size(), limit_, method_, route_, request.resource()), cursor);
    return state;
  }

  // The route's limit against what the headers declare.
  std::optional<HttpResponse> CheckHead() {
    method_ = Http::methodString(request.method());
    std::map<std::string, std::string> params;
    bool mismatch = false;
    route_ = shared_->Match(method_, request.resource(), &params, &mismatch);
    limit_ = LimitFor(*options_, route_, method_);
    for (const auto& [name, raw] : request.headers().rawList())
      if (AsciiLower(name) == "content-type" && IsMultipart(raw.value()) && !limit_.multipart)
        return MultipartOffRoute();
    if (const auto length = request.headers().tryGet<Http::Header::ContentLength>();
        length && length->value() > limit_.max_bytes)
      return TooLarge(length->value(), limit_, method_, route_, request.resource());
    return std::nullopt;
  }

  // Answers `response` and ends what the connection sends (FIN); Drop then
  // reads on for kLingerBytes, so that a client still sending sees the
  // answer rather than a reset, and cuts the connection.
  Http::Private::State Refuse(const HttpResponse& response, Pistache::StreamCursor& cursor) {
    refused_ = true;
    if (auto peer = peer_.lock()) {
      const std::string id = NewRequestId();
      const std::string bytes = PeerResponse::Serialize(response, id, "", /*close=*/true);
      const int fd = peer->fd();
      if (!answered_before_) {
        // Nothing of this connection waits in Pistache's write queue, so the
        // refusal may go out now: a queued write would wait until this
        // reactor thread stops reading, which a client that keeps sending
        // can put off for as long as it likes.
        (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::shutdown(fd, SHUT_WR);
      } else {
        // Behind the earlier answers. The callback runs on this reactor
        // thread, now or once written, while the descriptor is still this
        // connection's. Should the linger run out first, the client gets a
        // reset instead.
        peer->send(Pistache::RawBuffer(bytes, bytes.size()))
            .then([fd](ssize_t) { ::shutdown(fd, SHUT_WR); }, [](std::exception_ptr&) {});
      }
      // The route's pattern, never the client's path, goes to the log.
      std::fprintf(stderr, "ragd: %s: refused before the body: %d on %s %s\n", id.c_str(), response.status,
                   method_.c_str(), route_ ? route_->name.c_str() : "(no route)");
    }
    return Drop(cursor);
  }

  Http::Private::State Drop(Pistache::StreamCursor& cursor) {
    const size_t n = cursor.remaining();
    cursor.advance(n);
    dropped_ += n;
    if (dropped_ > kLingerBytes)
      if (auto peer = peer_.lock()) ::shutdown(peer->fd(), SHUT_RDWR);
    return Http::Private::State::Again;
  }

  const std::shared_ptr<const Shared> shared_;
  const std::shared_ptr<const HttpServerOptions> options_;
  const std::weak_ptr<Tcp::Peer> peer_;
  bool body_checked_ = false;  // the head of the current request was checked
  BodyLimit limit_;
  std::string method_;
  const Route* route_ = nullptr;
  bool refused_ = false;          // a request was refused: the connection only drops bytes until it closes
  bool answered_before_ = false;  // an earlier request of this connection was answered (or refused)
  size_t dropped_ = 0;            // bytes dropped since the refusal
};

class PistacheHandler : public Http::Handler {
 public:
  HTTP_PROTOTYPE(PistacheHandler)

  PistacheHandler(std::shared_ptr<Shared> shared, const HttpServerOptions& options)
      : shared_(std::move(shared)),
        options_(options),
        gate_options_(std::make_shared<const HttpServerOptions>(options)),
        on_response_(options.on_response) {}

  // Replaces Http::Handler::onConnection (private there), which only gives
  // the connection its request parser, to count the connection against the
  // caps first. One over a cap gets a 503 and is shut down: Pistache then
  // closes it as if the client had.
  void onConnection(const std::shared_ptr<Tcp::Peer>& peer) override {
    peer->putData(ParserData,
                  std::make_shared<GatedParser>(getMaxRequestSize(), shared_, gate_options_, peer));
    const std::string address = options_.trust_proxy ? "" : peer->address().host();
    if (shared_->OpenConnection(peer->getID(), address, options_)) return;
    static const std::string kBusy = [] {
      const std::string body =
          R"({"error":{"code":503,"type":"unavailable_error","message":"too many open connections; retry shortly"}})";
      return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\nRetry-After: 5\r\nConnection: close\r\n\r\n" + body;
    }();
    (void)::send(peer->fd(), kBusy.data(), kBusy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(peer->fd(), SHUT_RDWR);
  }

  void onRequest(const Http::Request& request, Http::ResponseWriter writer) override {
    ++*shared_->in_flight;
    struct Leaving {
      std::atomic<size_t>& n;
      ~Leaving() { --n; }
    } leaving{*shared_->in_flight};
    HttpRequest req;
    req.method = Http::methodString(request.method());
    req.path = request.resource();
    req.body = request.body();
    req.peer_address = request.address().host();
    for (const auto& h : request.headers().list()) {
      std::ostringstream v;
      h->write(v);
      req.headers[AsciiLower(h->name())] = v.str();
    }
    for (const auto& [name, raw] : request.headers().rawList()) req.headers[AsciiLower(name)] = raw.value();
    for (auto it = request.query().parameters_begin(); it != request.query().parameters_end(); ++it)
      req.query[PercentDecode(it->first)] = PercentDecode(it->second);
    ResolveClient(options_, &req);

    req.request_id = ValidRequestId(req.Header("x-request-id")) ? req.Header("x-request-id") : NewRequestId();
    const auto started = std::chrono::steady_clock::now();
    const bool cors = CorsAllowed(options_, req.Header("origin"));
    Exchange exchange(shared_.get(), writer.peer(), req.request_id,
                      cors ? CorsHead(req.Header("origin")) : std::string());
    HttpResponse resp;
    bool mismatch = false;
    const Route* route = shared_->Match(req.method, req.path, &req.params, &mismatch);
    if (route != nullptr) req.route = route->name;
    const bool preflight = req.method == "OPTIONS" && !req.Header("access-control-request-method").empty();
    // GatedParser refuses these before the body; checked again on the body
    // itself, which is what the handler gets.
    const BodyLimit limit = LimitFor(options_, route, req.method);
    if (IsMultipart(req.Header("content-type")) && !limit.multipart) {
      resp = MultipartOffRoute();
    } else if (req.body.size() > limit.max_bytes) {
      resp = TooLarge(req.body.size(), limit, req.method, route, req.path);
    } else if (preflight && cors && (route != nullptr || mismatch)) {
      resp = Preflight(req);
    } else if (route == nullptr) {
      resp = mismatch
                 ? HttpResponse::Error(405, "invalid_request_error", "method not allowed on " + req.path)
                 : HttpResponse::Error(404, "not_found_error", "no route for " + req.method + " " + req.path);
    } else {
      try {
        resp = route->handler(req, exchange);
      } catch (const std::exception& e) {
        resp = HttpResponse::Error(500, "server_error", std::string("internal error: ") + e.what());
      } catch (...) {
        resp = HttpResponse::Error(500, "server_error", "internal error");
      }
    }
    if (exchange.deferred()) return;
    // Every response goes out as raw bytes through the peer, like the deferred
    // ones: Pistache 0.0.5's ResponseWriter drops raw headers (Set-Cookie,
    // Retry-After) on this path.
    exchange.SendNow(resp);
    if (on_response_)
      on_response_(req, resp.status,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }

  void onDisconnection(const std::shared_ptr<Tcp::Peer>& peer) override {
    shared_->CloseConnection(peer->getID());
    std::shared_ptr<PeerResponse> stream;
    {
      std::lock_guard<std::mutex> lock(shared_->streams_mu);
      auto it = shared_->streams.find(peer->getID());
      if (it == shared_->streams.end()) return;
      stream = it->second.lock();
      shared_->streams.erase(it);
    }
    if (stream) stream->Cancel();
  }

 private:
  std::shared_ptr<Shared> shared_;
  HttpServerOptions options_;
  std::shared_ptr<const HttpServerOptions> gate_options_;  // the parsers' copy, outliving this handler
  ResponseHook on_response_;
};

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::unique_ptr<Http::Endpoint> endpoint;
  bool running = false;
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

HttpServer::~HttpServer() { Shutdown(); }

void HttpServer::Route(const std::string& method, const std::string& pattern, Handler handler) {
  impl_->shared->routes.push_back({pattern, method, SplitPath(pattern), std::move(handler)});
}

Status HttpServer::Start() {
  try {
    Pistache::Address addr(impl_->options.host, Pistache::Port(static_cast<uint16_t>(impl_->options.port)));
    impl_->endpoint = std::make_unique<Http::Endpoint>(addr);
    const auto stream_limit = std::chrono::seconds(impl_->options.stream_timeout_s);
    auto opts = Http::Endpoint::options()
                    .threads(impl_->options.threads)
                    .flags(Tcp::Options::ReuseAddr)
                    .maxRequestSize(impl_->options.max_request_bytes)
                    .headerTimeout(std::chrono::seconds(impl_->options.header_timeout_s))
                    .bodyTimeout(std::chrono::seconds(impl_->options.body_timeout_s))
                    .keepaliveTimeout(stream_limit);
    impl_->endpoint->init(opts);
    impl_->endpoint->setHandler(Http::make_handler<PistacheHandler>(impl_->shared, impl_->options));
    impl_->endpoint->serveThreaded();
    impl_->running = true;
  } catch (const std::exception& e) {
    impl_->endpoint.reset();
    return Status::Unavailable("cannot listen on " + impl_->options.host + ":" +
                               std::to_string(impl_->options.port) + ": " + e.what());
  }
  return Status::Ok();
}

int HttpServer::port() const {
  return impl_->endpoint ? static_cast<int>(static_cast<uint16_t>(impl_->endpoint->getPort())) : 0;
}

size_t HttpServer::InFlight() const { return impl_->shared->in_flight->load(); }

void HttpServer::InterruptDeferred() {
  std::vector<std::shared_ptr<PeerResponse>> pending;
  {
    std::lock_guard<std::mutex> lock(impl_->shared->streams_mu);
    for (const auto& [id, weak] : impl_->shared->streams)
      if (auto r = weak.lock()) pending.push_back(std::move(r));
  }
  for (const auto& r : pending) r->Interrupt();  // outside the lock: hooks may end their response
}

void HttpServer::Shutdown() {
  if (impl_ && impl_->running) {
    impl_->running = false;
    impl_->endpoint->shutdown();
  }
}

}  // namespace ragd::app
