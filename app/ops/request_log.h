// The request log: one JSON line per finished request (time, request id,
// user id, route, status, prompt/completion/cached tokens, time to first
// token, duration, finish reason, documents cited). Prompt and answer text
// are never written in plain text; when content logging is on they go to a
// separate file per UTC day, each record sealed with libsodium's secretbox
// (XSalsa20-Poly1305) under the operator's key, and day files older than the
// retention period are deleted.
//
// Content file format, one JSON line per request:
//   {"request_id": "...", "time": <unix s>, "nonce": "<base64 24 bytes>",
//    "box": "<base64 secretbox of {"prompt": "...", "answer": "..."}>"}
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace ragd::app {

struct RequestRecord {
  int64_t time = 0;  // Unix seconds when the request finished
  std::string request_id;
  int64_t user_id = 0;  // 0 = unauthenticated
  std::string route;    // route pattern
  int status = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  double ttft_ms = -1;  // -1 when no token was generated
  double duration_ms = 0;
  std::string finish_reason;             // "" for routes that generate nothing
  std::vector<int64_t> documents_cited;  // document ids
  std::string prompt;                    // content: only ever stored encrypted
  std::string answer;
};

struct RequestLogOptions {
  std::string path;             // the JSON-lines request log
  std::string content_dir;      // folder of the encrypted day files ("" = no content logging)
  std::string content_key_hex;  // 64 hex chars; required with content_dir
  int64_t retention_days = 30;  // day files older than this are deleted
};

class RequestLog {
 public:
  static Result<std::unique_ptr<RequestLog>> Open(const RequestLogOptions& options);
  ~RequestLog();

  // Appends the record (and its sealed content when enabled).
  void Write(const RequestRecord& record);

  // Deletes content day files older than the retention period (also done on
  // Open and at most hourly from Write). `now` in Unix seconds.
  void PurgeExpired(int64_t now);

  // Decrypts one content line (for operators' tooling and tests).
  static Result<std::string> OpenSealed(const std::string& line, const std::string& key_hex);

 private:
  RequestLog() = default;
  std::mutex mu_;
  RequestLogOptions options_;
  std::vector<unsigned char> key_;  // 32 bytes when content logging is on
  int log_fd_ = -1;
  int64_t last_purge_ = 0;
};

}  // namespace ragd::app
