// The libcurl boundary: one HTTP request to an upstream server, its response
// body handed over piece by piece as it arrives (a Server-Sent Events stream)
// and the transfer stopped at once when the caller asks. libcurl is included
// by http_client.cpp only.
//
// Thread-safety: Perform() may run on many threads at once (one easy handle
// per call; the library is initialised once, before the first call).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::app::upstream {

struct HttpCall {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POSTed as is; empty: a GET
  int64_t connect_timeout_ms = 2000;
  // The transfer fails when no byte arrives for this long (a server that
  // stopped answering without closing).
  int64_t idle_timeout_ms = 60000;
  int64_t total_timeout_ms = 0;  // 0 = no limit (streams last as long as the answer)
};

struct HttpResult {
  int status = 0;          // HTTP status of the response
  bool stopped = false;    // the sink or should_stop ended the transfer early
  std::string error_body;  // a non-2xx response's body (first 64 KiB)
};

// Called with each piece of a 2xx response's body; false stops the transfer.
using BodySink = std::function<bool(std::string_view)>;

// Runs `call`. `should_stop` is polled while waiting (at least once a
// second, and as data arrives); true ends the transfer and closes the connection, which the
// server sees as a client that has gone. kUnavailable for a transport
// failure (cannot connect, connection reset, timeout, a response cut short),
// with libcurl's reason; a stopped transfer is not an error.
Result<HttpResult> Perform(const HttpCall& call, const BodySink& sink,
                           const std::function<bool()>& should_stop);

}  // namespace ragd::app::upstream
